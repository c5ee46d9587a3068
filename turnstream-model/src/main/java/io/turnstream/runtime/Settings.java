package io.turnstream.runtime;

import io.turnstream.model.Topics;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Properties;
import org.apache.kafka.clients.CommonClientConfigs;

/**
 * What every service is configured from, in increasing precedence: built-in defaults, a
 * properties file ({@code --config}), the environment ({@code TURNSTREAM_BOOTSTRAP_SERVERS}) and
 * command-line flags. Properties starting with {@code turnstream.} are ours; every other
 * property (security, SASL, client tuning, Streams settings) passes through to Kafka untouched.
 * Every {@code turnstream.} key of the file must be one {@link TurnstreamKeys} knows: a misspelt key is refused
 * rather than silently ignored. They also carry the clock services read the time from: the system clock, unless a test sets
 * another with {@link #withClock}.
 */
public final class Settings {

    public static final String BOOTSTRAP_ENV = "TURNSTREAM_BOOTSTRAP_SERVERS";
    /** The one place the system clock is chosen: everything else takes its clock from the settings. */
    private static final Clock SYSTEM_CLOCK = Clock.systemUTC();

    private final Properties all;
    private final Clock clock;

    private Settings(Properties all, Clock clock) {
        this.all = all;
        this.clock = clock;
    }

    /**
     * @param configFile a properties file, or null
     * @param bootstrapServers from the flag or the environment, or null to keep the file's
     * @throws TurnstreamKeys.UnknownKeyException when the file holds a {@code turnstream.} key no component reads
     */
    public static Settings load(Path configFile, String bootstrapServers) throws IOException {
        Properties props = new Properties();
        if (configFile != null) {
            try (Reader reader = Files.newBufferedReader(configFile)) {
                props.load(reader);
            }
            TurnstreamKeys.requireKnown(props, configFile.toString());
        }
        if (bootstrapServers != null && !bootstrapServers.isBlank()) {
            props.setProperty(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        }
        return new Settings(props, SYSTEM_CLOCK);
    }

    public static Settings of(Properties props) {
        Properties copy = new Properties();
        copy.putAll(props);
        return new Settings(copy, SYSTEM_CLOCK);
    }

    public Settings with(String key, String value) {
        Properties copy = new Properties();
        copy.putAll(all);
        copy.setProperty(key, value);
        return new Settings(copy, clock);
    }

    /** The same settings, with the time read from {@code clock}. */
    public Settings withClock(Clock clock) {
        return new Settings(all, clock);
    }

    /** Where services read the wall-clock time (outside the topology, which uses its processor context's). */
    public Clock clock() {
        return clock;
    }

    public String bootstrapServers() {
        return all.getProperty(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG);
    }

    public Topics topics() {
        return Topics.from(all);
    }

    public String get(String key, String defaultValue) {
        return all.getProperty(registered(key), defaultValue);
    }

    public long getLong(String key, long defaultValue) {
        String value = all.getProperty(registered(key));
        if (value == null) {
            return defaultValue;
        }
        try {
            return Long.parseLong(value.strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + " must be a whole number, got '" + value + "'");
        }
    }

    /**
     * A component reading a {@code turnstream.} key that {@link TurnstreamKeys} does not list is a bug of ours: a file
     * setting that key would be refused at start-up. Failing on the read, defaults included, shows it in the first
     * test that builds the component's configuration rather than to the first user who sets the key.
     */
    private static String registered(String key) {
        if (!TurnstreamKeys.isKnown(key)) {
            throw new IllegalStateException(key + " is read but not listed in TurnstreamKeys: add it there");
        }
        return key;
    }

    /** Everything for Kafka clients: all properties except Turnstream's own. */
    public Properties kafkaProperties() {
        Properties kafka = new Properties();
        all.stringPropertyNames().stream()
                .filter(name -> !name.startsWith(TurnstreamKeys.PREFIX))
                .forEach(name -> kafka.setProperty(name, all.getProperty(name)));
        return kafka;
    }

    /** Every property, Turnstream's and Kafka's. */
    public Properties all() {
        Properties copy = new Properties();
        copy.putAll(all);
        return copy;
    }
}
