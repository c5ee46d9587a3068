package io.turnstream.cli;

import io.turnstream.runtime.Failures;
import io.turnstream.runtime.Settings;
import io.turnstream.security.ServiceAcls;
import java.io.PrintWriter;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code turnstream acls}: the least-privilege ACLs of each service's principal, printed or applied to a cluster. */
@Command(name = "acls", mixinStandardHelpOptions = true,
        description = {"Prints or applies the Kafka ACLs each service's principal needs, and no more.",
            "Principals default to User:gateway, User:topology, User:tool-executor and User:connect",
            "(--principal renames them). Topic names, group ids and the topology's application id",
            "follow --config, as the services do. --apply needs a principal allowed to alter ACLs."})
public final class AclsCommand implements Callable<Integer> {

    @Spec
    private CommandSpec spec;

    @Mixin
    private KafkaOptions kafka;

    @ArgGroup(multiplicity = "1")
    private Action action;

    static final class Action {
        @Option(names = "--print", required = true,
                description = "Print one ACL a line: principal, permission, operation, resource type, pattern type, name.")
        boolean print;

        @Option(names = "--apply", required = true, description = "Create the ACLs on the cluster (idempotent).")
        boolean apply;
    }

    @Option(names = "--principal", paramLabel = "SERVICE=PRINCIPAL",
            description = "The principal of a service (gateway, topology, tool-executor, connect) when it is not "
                    + "User:<service>, e.g. --principal gateway=User:svc-gateway. Repeatable.")
    private Map<String, String> principals = Map.of();

    @Override
    public Integer call() {
        Settings settings = action.apply ? kafka.connect(List.of()) : kafka.settingsWithoutBroker();
        ServiceAcls acls = ServiceAcls.of(settings, principals());
        PrintWriter out = spec.commandLine().getOut();
        if (action.apply) {
            apply(settings, acls);
            acls.lines().forEach(line -> out.println("applied " + line));
        } else {
            acls.lines().forEach(out::println);
        }
        out.flush();
        return ExitCodes.OK;
    }

    private Map<ServiceAcls.Service, String> principals() {
        Map<ServiceAcls.Service, String> named = new EnumMap<>(ServiceAcls.Service.class);
        principals.forEach((service, principal) -> {
            try {
                named.put(ServiceAcls.Service.named(service), principal);
            } catch (IllegalArgumentException e) {
                throw new ParameterException(spec.commandLine(), "--principal: " + e.getMessage());
            }
            if (!principal.contains(":")) {
                throw new ParameterException(spec.commandLine(), "--principal " + service + "=" + principal
                        + ": a principal is TYPE:NAME, e.g. User:" + principal);
            }
        });
        return named;
    }

    private static void apply(Settings settings, ServiceAcls acls) {
        try (Admin admin = Admin.create(ClusterCheck.adminProperties(settings))) {
            admin.createAcls(acls.all()).all().get(60, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            throw new CliFailure(ExitCodes.FAILURE, "cannot create the ACLs on " + settings.bootstrapServers() + ": "
                    + Failures.describe(e), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CliFailure(ExitCodes.FAILURE, "interrupted while creating the ACLs", e);
        }
    }
}
