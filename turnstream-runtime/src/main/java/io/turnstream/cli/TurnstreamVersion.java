package io.turnstream.cli;

import org.apache.kafka.common.utils.internals.AppInfoParser;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code --version}: the command, its version from the jar manifest, and the Kafka client version it runs with. */
public final class TurnstreamVersion implements IVersionProvider {

    @Spec
    private CommandSpec spec;

    @Override
    public String[] getVersion() {
        String own = TurnstreamVersion.class.getPackage().getImplementationVersion();
        return new String[] {spec.qualifiedName() + " " + (own != null ? own : "(development build)")
                + " (Kafka " + AppInfoParser.getVersion() + ")"};
    }
}
