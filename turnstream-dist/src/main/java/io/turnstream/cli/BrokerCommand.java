package io.turnstream.cli;

import io.turnstream.runtime.EmbeddedKafkaBroker;
import io.turnstream.runtime.Failures;
import io.turnstream.runtime.KraftQuorum;
import io.turnstream.runtime.Settings;
import io.turnstream.security.ServiceAcls;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.utils.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code turnstream broker}: a KRaft node in this process, a cluster of its own or (with
 * {@link QuorumOptions}) one node of a multi-node cluster, for running Turnstream on one machine.
 */
@Command(name = "broker", mixinStandardHelpOptions = true,
        description = {"Runs a Kafka broker in this process.",
            "A real KRaft node (broker and controller in one): a single-node cluster, or with",
            "--node-id, --voters and --cluster-id one node of a multi-node cluster (three",
            "replicas of internal topics, min.insync.replicas 2). Prints",
            "bootstrap.servers=HOST:PORT on stdout when it is ready; runs until SIGTERM or",
            "Ctrl-C, then shuts down cleanly.",
            "With --secure: SASL/SCRAM-SHA-256 and ACLs, one principal per service; prints",
            "credentials=DIR too, where each principal's client properties file (a --config) is.",
            "--host other than loopback (in a container) needs --secure, and offers SCRAM only."})
public final class BrokerCommand implements Callable<Integer> {

    private static final Logger LOG = LoggerFactory.getLogger(BrokerCommand.class);

    @Spec
    private CommandSpec spec;

    @Option(names = "--port", paramLabel = "N", defaultValue = "9092",
            description = "Client port on --host (default: ${DEFAULT-VALUE}; 0 picks a free one).")
    private int port;

    @Option(names = "--host", paramLabel = "HOST", defaultValue = "127.0.0.1",
            description = "Address the client listener binds (default: ${DEFAULT-VALUE}); any other than loopback, "
                    + "e.g. 0.0.0.0 in a container, needs --secure.")
    private String host;

    @Option(names = "--advertised-host", paramLabel = "HOST",
            description = "Host name clients are told to connect to, and the client files name (default: --host); "
                    + "in docker-compose, the broker's service name.")
    private String advertisedHost;

    @Option(names = "--ready-file", paramLabel = "FILE",
            description = "Written with the ready lines once the broker serves clients (and its principals and ACLs "
                    + "exist), removed on start and on shutdown: for a container's health check.")
    private Path readyFile;

    @Option(names = "--data-dir", paramLabel = "DIR",
            description = "Where the broker keeps its data, kept across restarts "
                    + "(default: a temporary directory deleted on exit).")
    private Path dataDir;

    @Mixin
    private QuorumOptions cluster;

    @Option(names = "--secure",
            description = "SASL/SCRAM-SHA-256 with ACLs: the principal admin (the only super user) and one per service "
                    + "(gateway, topology, tool-executor, connect) with least privilege; their client properties go "
                    + "to DATA-DIR/credentials/<principal>.properties.")
    private boolean secure;

    @Override
    public Integer call() throws Exception {
        Optional<KraftQuorum> quorum = cluster.quorum();
        if (quorum.isPresent() && port == 0) {
            throw new CliFailure(ExitCodes.USAGE, "a node of a cluster needs a fixed --port: the other nodes "
                    + "and the clients must know it");
        }
        if (quorum.isPresent() && secure) {
            // each node would make its own passwords when it formats its data directory
            throw new CliFailure(ExitCodes.USAGE, "--secure runs a single-node broker only; secure a multi-node "
                    + "cluster as a real one (docs/security.md)");
        }
        boolean onNetwork = !EmbeddedKafkaBroker.isLoopback(host);
        if (onNetwork && !secure) {
            throw new CliFailure(ExitCodes.USAGE, "--host " + host + " lets other machines reach the broker: add --secure "
                    + "(SASL/SCRAM and ACLs); an open broker gives anyone who reaches it every tenant's conversations");
        }
        if (onNetwork && quorum.isPresent()) {
            throw new CliFailure(ExitCodes.USAGE, "--host other than loopback runs a single-node broker only");
        }
        if (readyFile != null) {
            Files.deleteIfExists(readyFile);
        }
        requirePortFree();
        boolean temporary = dataDir == null;
        Path dir = temporary ? Files.createTempDirectory("turnstream-broker") : Files.createDirectories(dataDir);
        EmbeddedKafkaBroker broker = quorum.map(q -> new EmbeddedKafkaBroker(port, dir, q, Map.of()))
                .orElseGet(() -> new EmbeddedKafkaBroker(port, dir))
                .listeningOn(host, advertisedHost != null ? advertisedHost : host);
        if (secure) {
            broker.secured(ServiceAcls.of(Settings.of(new Properties())).brokerSecurity(dir));
        }
        AutoCloseable shutdown = () -> {
            if (readyFile != null) {
                Files.deleteIfExists(readyFile);
            }
            broker.stop();
            if (temporary) {
                Utils.delete(dir.toFile());
            }
        };
        try {
            broker.start();
        } catch (RuntimeException e) {
            shutdown.close();
            throw new CliFailure(ExitCodes.FAILURE, "cannot start the broker on port " + port + ": "
                    + Failures.rootCause(e).getMessage(), e);
        }
        LOG.info("broker data in {}{}", dir, temporary ? " (temporary: deleted on exit; --data-dir keeps it)" : "");
        String ready = "bootstrap.servers=" + broker.bootstrapServers() + "\n"
                + (secure ? "credentials=" + broker.security().credentialsDir() + "\n" : "");
        spec.commandLine().getOut().print(ready);
        spec.commandLine().getOut().flush();
        if (readyFile != null) {
            Files.writeString(readyFile, ready);
        }
        UntilStopped.run("broker", shutdown, new CompletableFuture<>());
        return ExitCodes.OK;
    }

    /** Kafka reports a taken port with pages of stack traces from its acceptor; say it in one line first. */
    private void requirePortFree() {
        if (port == 0) {
            return;
        }
        try (ServerSocket probe = new ServerSocket()) {
            probe.setReuseAddress(true);
            probe.bind(new InetSocketAddress(host, port));
        } catch (IOException e) {
            throw new CliFailure(ExitCodes.FAILURE, "port " + port + " on " + host + " is in use: stop what holds it "
                    + "or pick another with --port (0 picks a free one)");
        }
    }
}
