package io.turnstream.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TurnstreamKeysTest {

    @Test
    void exactKeysOfEveryComponentAreKnown() {
        assertThat(List.of("turnstream.batch.gradient", "turnstream.topic.raw-events", "turnstream.topic.tool-ledger",
                "turnstream.streams.close-timeout.ms", "turnstream.gateway.view.heartbeat-ms",
                "turnstream.gateway.tenant.max-tokens-per-day", "turnstream.tool-executor.workspace"))
                .allMatch(TurnstreamKeys::isKnown);
    }

    @Test
    void familiesTakeAnyNameButOnlyTheirOwnKeys() {
        assertThat(List.of("turnstream.gateway.price.claude-sonnet-4", "turnstream.gateway.context-window.gpt-4.1",
                "turnstream.gateway.tenant.acme.max-tokens-per-day", "turnstream.gateway.tenant.acme.max-cost-usd-per-day",
                "turnstream.gateway.tenant.acme.allowed-models", "turnstream.tool-executor.timeout-ms.bash",
                "turnstream.tool-executor.approval.write_file"))
                .allMatch(TurnstreamKeys::isKnown);
        assertThat(List.of("turnstream.gateway.price.", "turnstream.gateway.tenant.acme.max-concurrent-turns",
                "turnstream.topic.raw-event"))
                .noneMatch(TurnstreamKeys::isKnown);
    }

    @Test
    void keysWithoutOurPrefixAreLeftToKafka() {
        assertThat(List.of("bootstrap.servers", "num.stream.threads", "no.such.kafka.setting", "turnstreams.batch.gradient"))
                .allMatch(TurnstreamKeys::isKnown);
    }

    @Test
    void aMisspellingIsRefusedNamingTheNearestKeyAndWhereKeysAreDocumented() {
        Properties props = new Properties();
        props.setProperty("turnstream.batch.timout.ms", "500");
        props.setProperty("turnstream.batch.gradient", "10,20");
        props.setProperty("security.protocol", "SASL_SSL");

        assertThatThrownBy(() -> TurnstreamKeys.requireKnown(props, "prod.properties"))
                .isInstanceOf(TurnstreamKeys.UnknownKeyException.class)
                .hasMessage("prod.properties: unknown Turnstream setting turnstream.batch.timout.ms (did you mean "
                        + "turnstream.batch.timeout.ms?); Turnstream's settings are listed in " + TurnstreamKeys.DOCUMENTED_IN
                        + "; keys not starting with turnstream. go to Kafka unchanged");
    }

    @Test
    void theNearestKeyMayBeAFamilyAndEveryUnknownKeyIsNamed() {
        assertThat(TurnstreamKeys.nearest("turnstream.gateway.prices.claude-sonnet-4"))
                .isEqualTo("turnstream.gateway.price.<model>");
        assertThat(TurnstreamKeys.nearest("turnstream.gateway.tenant.acme.max-token-per-day"))
                .isEqualTo("turnstream.gateway.tenant.<tenant>.max-tokens-per-day");
        assertThat(TurnstreamKeys.nearest("turnstream.tool-executor.aproval.bash"))
                .isEqualTo("turnstream.tool-executor.approval.<tool>");
        assertThat(TurnstreamKeys.nearest("turnstream.topolgy.application.id")).isEqualTo("turnstream.application.id");

        Properties props = new Properties();
        props.setProperty("turnstream.gateway.prot", "8080");
        props.setProperty("turnstream.tool-executor.workspce", "/tmp/w");
        assertThatThrownBy(() -> TurnstreamKeys.requireKnown(props, "f"))
                .hasMessageStartingWith("f: unknown Turnstream settings turnstream.gateway.prot (did you mean "
                        + "turnstream.gateway.port?), turnstream.tool-executor.workspce (did you mean "
                        + "turnstream.tool-executor.workspace?); ");
    }

    @Test
    void knownKeysPass() {
        Properties props = new Properties();
        TurnstreamKeys.exact().forEach(key -> props.setProperty(key, "1"));
        props.setProperty("turnstream.gateway.price.claude", "3,15");
        props.setProperty("sasl.mechanism", "PLAIN");
        assertThatCode(() -> TurnstreamKeys.requireKnown(props, "f")).doesNotThrowAnyException();
    }

    @Test
    void loadingAConfigFileRefusesAnUnknownKey(@TempDir Path dir) throws IOException {
        Path file = Files.writeString(dir.resolve("app.properties"), "turnstream.turn.idle-timout.ms=1000\n");
        assertThatThrownBy(() -> Settings.load(file, null))
                .isInstanceOf(TurnstreamKeys.UnknownKeyException.class)
                .hasMessageStartingWith(file + ": unknown Turnstream setting turnstream.turn.idle-timout.ms "
                        + "(did you mean turnstream.turn.idle-timeout.ms?)");

        Path good = Files.writeString(dir.resolve("good.properties"), "turnstream.turn.idle-timeout.ms=1000\nlinger.ms=5\n");
        assertThat(Settings.load(good, "127.0.0.1:9092").getLong("turnstream.turn.idle-timeout.ms", 0)).isEqualTo(1000);
    }

    @Test
    void readingAnUnregisteredKeyIsOurBugAndFailsAtOnceEvenWithADefault() {
        Settings settings = Settings.of(new Properties());
        assertThatThrownBy(() -> settings.getLong("turnstream.batch.brand-new.ms", 5))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("turnstream.batch.brand-new.ms is read but not listed in TurnstreamKeys: add it there");
        assertThatThrownBy(() -> settings.get("turnstream.gateway.brand-new", "x")).isInstanceOf(IllegalStateException.class);
        assertThat(settings.get("turnstream.gateway.price.claude", "none")).isEqualTo("none");
        assertThat(settings.get("linger.ms", "5")).isEqualTo("5");
    }
}
