package io.turnstream.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.cli.TopologyCommand;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The topology's health endpoint listens on loopback by default; --health-host or turnstream.health.host moves it. */
class HealthAddressTest {

    @Test
    void healthBindsLoopbackUnlessConfigured() {
        Settings none = Settings.of(new Properties());
        assertThat(StreamsService.Options.from(none, 8081).healthHost()).isEqualTo("127.0.0.1");
        assertThat(StreamsService.Options.from(none.with(HealthServer.HOST, "0.0.0.0"), 8081).healthHost())
                .isEqualTo("0.0.0.0");
        CommandLine.ParseResult parsed = new CommandLine(new TopologyCommand()).parseArgs("--health-host", "0.0.0.0");
        assertThat(parsed.matchedOptionValue("--health-host", "")).isEqualTo("0.0.0.0");
    }
}
