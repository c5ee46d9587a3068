package io.turnstream.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.turnstream.model.ToolResult;
import io.turnstream.runtime.EmbeddedKafkaBroker;
import io.turnstream.runtime.Settings;
import io.turnstream.testsupport.UsesBroker;
import java.io.IOException;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * An executor process is killed (SIGKILL) in the middle of a batch and another takes its place: every
 * call still gets exactly one result, answered calls are not run again, the interrupted safe call is run
 * again, and the interrupted non-idempotent call is answered "outcome unknown" instead of run twice.
 */
@ExtendWith(SharedBroker.class)
@UsesBroker
class ToolExecutorCrashTest {

    private static EmbeddedKafkaBroker broker;

    @BeforeAll
    static void useTheSharedBroker(EmbeddedKafkaBroker shared) {
        broker = shared;
    }

    @Test
    void exactlyOneResultPerCallAcrossAKilledAndRestartedExecutor() throws Exception {
        try (KafkaToolsFixture kafka = new KafkaToolsFixture(broker, "crash", 1)) {
            Settings settings = kafka.settings();
            Process first = startExecutorProcess(settings, kafka.workspace);
            Path ws = kafka.workspace;

            // one partition, so the committed offset stays at n3 and everything after it is read again
            String n3 = kafka.call("turn-1", "note", "{\"wait_for\": \"gate-n3\"}");
            String n1 = kafka.call("turn-1", "note", "{\"n\": 1}");
            String n2 = kafka.call("turn-1", "note", "{\"n\": 2}");
            String a1 = kafka.call("turn-2", "append", "{\"line\": \"one\"}");
            String a2 = kafka.call("turn-2", "append", "{\"line\": \"two\", \"wait_for\": \"gate-a2\"}");
            kafka.awaitResults(List.of(n1, n2, a1));
            await().atMost(Duration.ofSeconds(60)).until(() -> runs(ws).containsAll(List.of("start " + n3, "start " + a2)));

            first.destroyForcibly().waitFor();
            Files.createFile(ws.resolve("gate-n3"));
            Files.createFile(ws.resolve("gate-a2"));
            try (ToolExecutorService second = kafka.start(ProcessTools.registry(), settings)) {
                String s1 = kafka.call("turn-1", "append", "{\"line\": \"s1\"}");
                String s2 = kafka.call("turn-2", "append", "{\"line\": \"s2\"}");

                // s1 and s2 are unsafe: they run after every earlier call of their turn, so their results come last
                List<ConsumerRecord<String, ToolResult>> results = kafka.awaitResults(List.of(n1, n2, n3, a1, a2, s1, s2));
                assertThat(results).extracting(r -> r.value().callId()).containsExactlyInAnyOrder(n1, n2, n3, a1, a2, s1, s2);
                Map<String, ToolResult> byCall = results.stream().map(ConsumerRecord::value)
                        .collect(Collectors.toMap(ToolResult::callId, Function.identity()));
                assertThat(byCall.get(n3).success()).isTrue();
                assertThat(byCall.get(a2).error().code()).isEqualTo(ToolErrors.OUTCOME_UNKNOWN);
                assertThat(byCall.get(a2).error().message()).contains("outcome is unknown").contains("not run again");
            }
            assertThat(runs(ws)).filteredOn(line -> line.equals("start " + n3)).as("the safe call cut off by the crash runs again").hasSize(2);
            for (String once : List.of(n1, n2, a1, a2)) {
                assertThat(runs(ws)).filteredOn(line -> line.equals("start " + once)).as(once).hasSize(1);
            }
            assertThat(Files.readAllLines(ws.resolve(ProcessTools.OUT))).containsExactlyInAnyOrder("one", "s1", "s2");
        }
    }

    @Test
    void aResultFinishedWhileTheBrokerIsDownIsPublishedOnceItIsBack() throws Exception {
        GatedTools tools = new GatedTools();
        try (EmbeddedKafkaBroker own = EmbeddedKafkaBroker.onFreePort().start();
             KafkaToolsFixture kafka = new KafkaToolsFixture(own, "outage", 1)) {
            ToolExecutorService executor = kafka.start(ToolRegistry.of(List.of(tools.read)), kafka.settings()
                    .with("max.block.ms", "2000").with("request.timeout.ms", "2000"));
            String before = kafka.call("turn-1", "read", GatedTools.named("before"));
            String during = kafka.call("turn-1", "read", GatedTools.named("during"));
            tools.open("before");
            kafka.awaitResult(before);
            await().until(() -> tools.events.contains("start during"));

            own.stop();
            tools.open("during");
            await().until(() -> tools.events.contains("end during"));
            own.start();

            String after = kafka.call("turn-2", "read", GatedTools.named("after"));
            tools.open("after");
            assertThat(kafka.awaitResults(List.of(before, during, after))).extracting(r -> r.value().callId())
                    .containsExactlyInAnyOrder(before, during, after);
            assertThat(executor.stopped()).isNotDone();
            executor.close();
        }
    }

    private static List<String> runs(Path ws) throws IOException {
        Path runs = ws.resolve(ProcessTools.RUNS);
        return Files.exists(runs) ? Files.readAllLines(runs) : List.of();
    }

    /** The executor in a JVM of its own, on this test's class path, with its output in a log next to the workspace. */
    private static Process startExecutorProcess(Settings settings, Path workspace) throws IOException {
        Path settingsFile = Files.createTempFile("tool-executor", ".properties");
        try (Writer writer = Files.newBufferedWriter(settingsFile)) {
            settings.all().store(writer, "crash test executor");
        }
        Path log = workspace.resolveSibling(workspace.getFileName() + "-executor.log");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        return new ProcessBuilder(java, "-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
                ProcessTools.class.getName(), settingsFile.toString())
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }
}
