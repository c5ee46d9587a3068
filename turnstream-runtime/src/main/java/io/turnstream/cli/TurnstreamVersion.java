package io.turnstream.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code --version}: the command, its version from the jar manifest, and the Kafka client version it runs with. */
public final class TurnstreamVersion implements IVersionProvider {

    /** Written into kafka-clients' jar by Kafka's build; read here rather than through Kafka's internal classes, which move. */
    private static final String KAFKA_VERSION_RESOURCE = "/kafka/kafka-version.properties";

    @Spec
    private CommandSpec spec;

    @Override
    public String[] getVersion() {
        String own = TurnstreamVersion.class.getPackage().getImplementationVersion();
        return new String[] {spec.qualifiedName() + " " + (own != null ? own : "(development build)")
                + " (Kafka " + kafkaVersion() + ")"};
    }

    /** The version of the Kafka clients on the class path, e.g. {@code 4.4.0}, or {@code unknown}. */
    public static String kafkaVersion() {
        try (InputStream in = KafkaProducer.class.getResourceAsStream(KAFKA_VERSION_RESOURCE)) {
            if (in == null) {
                return "unknown";
            }
            Properties props = new Properties();
            props.load(in);
            return props.getProperty("version", "unknown");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + KAFKA_VERSION_RESOURCE + " from kafka-clients", e);
        }
    }
}
