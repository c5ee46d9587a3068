package io.turnstream.connect;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.model.ChangeType;
import io.turnstream.model.Json;
import io.turnstream.model.PayloadType;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UiItemType;
import io.turnstream.model.UpsertEnvelope;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.runtime.WorkerConfig;
import org.apache.kafka.connect.runtime.isolation.LoaderSwap;
import org.apache.kafka.connect.runtime.isolation.PluginDesc;
import org.apache.kafka.connect.runtime.isolation.Plugins;
import org.apache.kafka.connect.storage.Converter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The plugin zip as a user's own worker sees it: unzipped into a directory on {@code plugin.path},
 * scanned by Connect's plugin isolation, the converter loaded from the plugin's own jars and turning
 * an item-state record into a row. Run by failsafe after {@code package}, which builds the zip.
 */
class ConnectPluginDirectoryIT {

    private static final Path ZIP = Path.of("target", "turnstream-connect-plugin.zip");

    @Test
    void theZipHoldsTheConverterItsDependenciesAndTheConfigsButNotKafka() throws IOException {
        List<String> entries = entries();

        assertThat(entries).contains("turnstream-connect/config/postgres-item-state-sink.properties",
                "turnstream-connect/config/worker.properties", "turnstream-connect/config/item-state-table.sql");
        assertThat(entries).anyMatch(e -> e.matches("turnstream-connect/lib/turnstream-connect-.*\\.jar"))
                .anyMatch(e -> e.matches("turnstream-connect/lib/turnstream-model-.*\\.jar"))
                .anyMatch(e -> e.matches("turnstream-connect/lib/jackson-databind-.*\\.jar"));
        assertThat(entries).noneMatch(e -> e.contains("/kafka-") || e.contains("/connect-") || e.contains("slf4j"));
    }

    @Test
    void aWorkersPluginPathFindsTheConverterAndItConvertsFromThePluginsOwnJars(@TempDir Path pluginPath) throws Exception {
        unzip(pluginPath);
        Plugins plugins = new Plugins(Map.of(WorkerConfig.PLUGIN_PATH_CONFIG, pluginPath.toString()));

        PluginDesc<Converter> desc = plugins.converters().stream()
                .filter(d -> d.className().equals(ItemStateConverter.class.getName()))
                .findFirst().orElseThrow(() -> new AssertionError("the worker did not find ItemStateConverter"));
        assertThat(desc.location()).as("where the worker loads it from")
                .contains(pluginPath.resolve("turnstream-connect").toString());

        try (LoaderSwap swap = plugins.withClassLoader(desc.loader())) {
            Converter converter = desc.pluginClass().getDeclaredConstructor().newInstance();
            assertThat(converter.getClass().getClassLoader()).as("isolated from the worker's class path")
                    .isSameAs(desc.loader()).isNotSameAs(getClass().getClassLoader());
            converter.configure(Map.of(), false);

            SchemaAndValue row = converter.toConnectData("llm.item-state", Json.toBytes(messageUpsert()));

            assertThat(((Struct) row.value()).getString("content")).isEqualTo("Hello from the plugin");
            assertThat(((Struct) row.value()).getString("item_id")).isEqualTo("msg-1");
        }
    }

    private static UpsertEnvelope messageUpsert() {
        UIUpsert upsert = UIUpsert.text("turn-1", "thread-1", "msg-1", UiItemType.MESSAGE, ChangeType.COMPLETED, 2,
                "Hello from the plugin", "agent", "anthropic");
        return new UpsertEnvelope("event-1", 1_760_000_000_000L, "turn-1", 3, PayloadType.ITEM_UPSERT, upsert);
    }

    private static List<String> entries() throws IOException {
        List<String> names = new ArrayList<>();
        try (ZipInputStream zip = new ZipInputStream(Files.newInputStream(ZIP))) {
            for (ZipEntry entry = zip.getNextEntry(); entry != null; entry = zip.getNextEntry()) {
                names.add(entry.getName());
            }
        }
        return names;
    }

    private static void unzip(Path into) throws IOException {
        try (ZipInputStream zip = new ZipInputStream(Files.newInputStream(ZIP))) {
            for (ZipEntry entry = zip.getNextEntry(); entry != null; entry = zip.getNextEntry()) {
                Path target = into.resolve(entry.getName()).normalize();
                if (entry.isDirectory()) {
                    Files.createDirectories(target);
                } else {
                    Files.createDirectories(target.getParent());
                    Files.copy(zip, target);
                }
            }
        }
    }
}
