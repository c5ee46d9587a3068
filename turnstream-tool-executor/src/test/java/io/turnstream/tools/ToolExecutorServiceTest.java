package io.turnstream.tools;

import io.turnstream.model.DeadLetterHeaders;
import static io.turnstream.tools.GatedTools.named;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.model.Json;
import io.turnstream.model.ToolCall;
import io.turnstream.model.ToolResult;
import io.turnstream.runtime.EmbeddedKafkaBroker;
import io.turnstream.runtime.PrometheusScrape;
import io.turnstream.runtime.Settings;
import io.turnstream.runtime.TenantClaims;
import io.turnstream.schema.RegistryOutage;
import io.turnstream.testsupport.UsesBroker;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.TestInfo;

/** The tool executor end to end on a real broker: calls in on llm.tool-calls, one result per call out on llm.tool-results. */
@ExtendWith(SharedBroker.class)
@UsesBroker
class ToolExecutorServiceTest {

    private static EmbeddedKafkaBroker broker;

    private final GatedTools tools = new GatedTools();
    private KafkaToolsFixture kafka;
    private ToolExecutorService executor;

    @BeforeAll
    static void useTheSharedBroker(EmbeddedKafkaBroker shared) {
        broker = shared;
    }

    private void given(TestInfo test, int partitions) {
        kafka = new KafkaToolsFixture(broker, test.getTestMethod().orElseThrow().getName(), partitions);
    }

    /**
     * Waits for something the executor does once it reads its first calls: that comes after its consumer group's join
     * and the ledger's read on assignment, so it is given as long as a result is ({@link KafkaToolsFixture#PATIENCE}).
     */
    private static void awaitFirstRead(Callable<Boolean> condition) {
        await().atMost(KafkaToolsFixture.PATIENCE).until(condition);
    }

    @AfterEach
    void stop() {
        if (executor != null) {
            executor.close();
        }
        kafka.close();
    }

    @Test
    void everyCallGetsExactlyOneResultKeyedByItsTurnAndBadRecordsAreDeadLettered(TestInfo test) throws Exception {
        given(test, 2);
        Files.writeString(kafka.workspace.resolve("hello.txt"), "hello from the workspace\n");
        executor = kafka.start(ToolRegistry.installed());

        String read = kafka.call("turn-1", "read_file", "{\"path\": \"hello.txt\"}");
        String unknown = kafka.call("turn-1", "rm_rf", "{}");
        String invalid = kafka.call("turn-2", "read_file", "{\"file\": \"hello.txt\"}");
        String unparsed = kafka.call("turn-2", "grep", "{\"pattern\": \"hel");
        kafka.produce(kafka.topics.toolCalls(), "turn-3", "not json".getBytes(StandardCharsets.UTF_8));
        kafka.produce(kafka.topics.toolCalls(), "turn-3", "{\"turnId\": \"turn-3\", \"toolName\": \"read_file\"}".getBytes(StandardCharsets.UTF_8));

        List<ConsumerRecord<String, ToolResult>> results = kafka.awaitResults(List.of(read, unknown, invalid, unparsed));
        Map<String, ConsumerRecord<String, ToolResult>> byCall = results.stream()
                .collect(Collectors.toMap(r -> r.value().callId(), Function.identity()));
        assertThat(results).hasSize(4);
        assertThat(byCall.get(read).key()).isEqualTo("turn-1");
        assertThat(byCall.get(read).value().success()).isTrue();
        assertThat(byCall.get(read).value().output().asText()).isEqualTo("hello from the workspace\n");
        assertThat(byCall.get(unknown).value().output().asText()).isEqualTo("Tool not found: rm_rf");
        assertThat(byCall.get(invalid).key()).isEqualTo("turn-2");
        assertThat(byCall.get(invalid).value().error().code()).isEqualTo(ToolErrors.INVALID_ARGUMENTS);
        assertThat(byCall.get(unparsed).value().error().message()).contains("arguments must be a JSON object");

        List<ConsumerRecord<String, byte[]>> letters = kafka.awaitDeadLetters(found -> found.size() == 2);
        assertThat(letters).extracting(letter -> new String(letter.headers().lastHeader(DeadLetterHeaders.REASON).value(),
                StandardCharsets.UTF_8)).satisfiesExactly(
                        reason -> assertThat(reason).startsWith("not a ToolCall: "),
                        reason -> assertThat(reason).isEqualTo("ToolCall without a callId"));

        await().until(() -> executor.metrics().value("calls-total", "read_file") == 2);
        assertThat(executor.metrics().value("errors-total", "read_file")).isEqualTo(1);
        assertThat(executor.metrics().value("calls-total", ToolExecutorMetrics.UNKNOWN_TOOL)).isEqualTo(1);
        assertThat(executor.metrics().value("dead-letters-total", null)).isEqualTo(2);

        PrometheusScrape scrape = new PrometheusScrape("text/plain", executor.serviceMetrics().scrape());
        assertThat(scrape.sum("turnstream_tool_executor_calls_total", Map.of("tool", "read_file", "service", "tool-executor")))
                .isEqualTo(2);
        assertThat(scrape.sum("turnstream_tool_executor_dead_letters_total")).isEqualTo(2);
        assertThat(scrape.sum("kafka_producer_record_send_total")).isPositive();
    }

    /**
     * A schema registry that cannot be reached (on Avro: a tool-call record whose schema is not cached yet) is nobody's
     * record's fault: the executor neither dead-letters the call nor stops (before, it stopped "by an unexpected
     * failure"); it reads the record again after a backoff, is not ready meanwhile, and runs the call once the registry
     * answers again.
     */
    @Test
    void aCallReadWhileTheSchemaRegistryCannotBeReachedRunsOnceTheRegistryIsBack(TestInfo test) throws Exception {
        given(test, 1);
        RegistryOutage wire = startOnAWireWithoutRegistry(kafka.settings());
        wire.down = true;

        String call = kafka.call("turn-1", "read_file", "{\"path\": \"hello.txt\"}");
        awaitFirstRead(() -> executor.waitingFor().containsKey("tool-calls"));
        assertThat(kafka.answered(call)).as("not answered while it cannot be read").isFalse();

        wire.down = false;
        assertThat(kafka.awaitResult(call).output().asText()).isEqualTo("hello\n");
        await().until(() -> executor.waitingFor().isEmpty());
        assertThat(executor.stopped()).isNotDone();
        assertThat(kafka.awaitResultsOf(call, 1)).hasSize(1);
        assertThat(executor.metrics().value("dead-letters-total", null)).isZero();
    }

    /**
     * A result that cannot be written while the schema registry cannot be reached (on Avro, its schema is registered on
     * first write) does not stop the executor (before, it stopped "by an unexpected failure"): it is published after a
     * backoff, the executor not ready meanwhile, once and as its one run's result, even of a call that must not run twice.
     */
    @Test
    void aResultWrittenWhileTheSchemaRegistryCannotBeReachedIsPublishedOnceTheRegistryIsBack(TestInfo test) {
        given(test, 1);
        RegistryOutage wire = new RegistryOutage();
        executor = new ToolExecutorService(kafka.settings(), ToolRegistry.of(List.of(tools.write)), wire).start();
        wire.writesDown = true;
        tools.open("w");

        String call = kafka.call("turn-1", "write", named("w"));
        awaitFirstRead(() -> tools.events.contains("end w"));
        await().until(() -> executor.waitingFor().containsKey("tool-results"));
        assertThat(kafka.answered(call)).as("not published while it cannot be written").isFalse();

        wire.writesDown = false;
        ToolResult result = kafka.awaitResult(call);
        assertThat(result.output().asText()).as("its one run's result, not OUTCOME_UNKNOWN").isEqualTo("done w");
        await().until(() -> executor.waitingFor().isEmpty());
        assertThat(executor.stopped()).isNotDone();
        assertThat(tools.events).as("run once").containsExactly("start w", "end w");
        assertThat(kafka.awaitResultsOf(call, 1)).hasSize(1);
    }

    /**
     * The wait for the schema registry ends when the partition it waits on goes to another instance, though this one's
     * partition left stays idle: before, it ended only once this executor read a record again, and {@code /health} was
     * 503 until then.
     */
    @Test
    void aRegistryWaitEndsWhenThePartitionItWaitsOnGoesToAnotherInstance(TestInfo test) throws Exception {
        given(test, 2);
        // assigned by range, static members in the order of their instance ids: this one keeps partition 0
        RegistryOutage wire = startOnAWireWithoutRegistry(rangeAssigned(kafka.settings()));
        wire.down = true;
        String call = kafka.callOnPartition(1, "turn-1", "read_file", "{\"path\": \"hello.txt\"}");
        awaitFirstRead(() -> executor.waitingFor().containsKey("tool-calls"));

        Settings other = rangeAssigned(kafka.settings("instance-id", kafka.name + "-instance-b"));
        try (ToolExecutorService takingPartition1 = new ToolExecutorService(other, ToolRegistry.installed()).start()) {
            assertThat(kafka.awaitResult(call).output().asText()).as("answered by the instance partition 1 went to")
                    .isEqualTo("hello\n");
            await().until(() -> executor.waitingFor().isEmpty());
        }
        assertThat(wire.down).as("with the registry still away for this executor").isTrue();
        assertThat(executor.stopped()).isNotDone();
    }

    /** Starts the executor on a wire whose schema registry a test can take away, with hello.txt in its workspace to read. */
    private RegistryOutage startOnAWireWithoutRegistry(Settings settings) throws IOException {
        Files.writeString(kafka.workspace.resolve("hello.txt"), "hello\n");
        RegistryOutage wire = new RegistryOutage();
        executor = new ToolExecutorService(settings, ToolRegistry.installed(), wire).start();
        return wire;
    }

    private static Settings rangeAssigned(Settings settings) {
        Properties props = settings.all();
        props.setProperty(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, RangeAssignor.class.getName());
        return Settings.of(props);
    }

    @Test
    void aCallIdThatAnotherTurnReusesRunsInBothAndIsLedgeredByTurnAndCall(TestInfo test) throws Exception {
        given(test, 1);
        Files.writeString(kafka.workspace.resolve("hello.txt"), "hello\n");
        executor = kafka.start(ToolRegistry.installed());

        kafka.callWithId("turn-1", "toolu_same", "read_file", "{\"path\": \"hello.txt\"}");
        kafka.callWithId("turn-2", "toolu_same", "read_file", "{\"path\": \"hello.txt\"}");

        List<ConsumerRecord<String, ToolResult>> results = kafka.awaitResultsOf("toolu_same", 2);
        assertThat(results).extracting(ConsumerRecord::key).as("the second is no duplicate of the first")
                .containsExactlyInAnyOrder("turn-1", "turn-2");
        assertThat(results).allSatisfy(result -> assertThat(result.value().success()).isTrue());
        assertThat(kafka.awaitLedgerKeys(keys -> keys.containsAll(List.of("turn-1/toolu_same", "turn-2/toolu_same"))))
                .doesNotContain("toolu_same");
    }

    @Test
    void withAClaimKeyACallRunsOnlyWhenTheGatewaySignedItsTenantForItsRun(TestInfo test) throws Exception {
        given(test, 1);
        String key = "a-claim-key-of-at-least-32-characters";
        Path keyFile = Files.writeString(Files.createTempFile("claim-key", ""), key);
        executor = kafka.start(ToolRegistry.installed(), kafka.settings().with(TenantClaims.KEY_FILE, keyFile.toString()));
        TenantClaims gateway = TenantClaims.withKey(key, "the test");
        Headers claimOfA = new RecordHeaders();
        gateway.addTo(claimOfA, "tenant-a", "run-1");

        kafka.produce(kafka.topics.toolCalls(), "turn-1", toolCall("call-signed", "turn-1", "tenant-a"), claimOfA);
        kafka.produce(kafka.topics.toolCalls(), "turn-2", toolCall("call-forged", "turn-2", "tenant-b"), claimOfA);
        kafka.produce(kafka.topics.toolCalls(), "turn-3", toolCall("call-unsigned", "turn-3", null));

        assertThat(kafka.awaitResult("call-signed").success()).isTrue();
        List<ConsumerRecord<String, byte[]>> letters = kafka.awaitDeadLetters(found -> found.size() == 2);
        assertThat(letters).extracting(letter -> new String(letter.headers().lastHeader(DeadLetterHeaders.REASON).value(),
                StandardCharsets.UTF_8)).containsExactly(
                        "ToolCall's tenant not trusted: the " + TenantClaims.HEADER + " header does not verify for tenant "
                                + "tenant-b and run run-1: the tenant field is not the one a gateway signed",
                        "ToolCall's tenant not trusted: no " + TenantClaims.HEADER + " header: the claim of no tenant for "
                                + "run run-1 is not signed by a gateway");
        assertThat(kafka.answered("call-forged")).isFalse();
        assertThat(kafka.answered("call-unsigned")).isFalse();
        assertThat(kafka.workspace.resolve("tenants").resolve("tenant-b")).as("nothing ran as tenant-b").doesNotExist();
    }

    private static byte[] toolCall(String callId, String turnId, String tenantId) {
        return Json.toBytes(new ToolCall(callId, turnId, "thread-1", "run-1", "item-" + callId, "list_files",
                Json.parseOrText("{}"), System.currentTimeMillis(), tenantId));
    }

    @Test
    void safeCallsRunTogetherAndALongCallHoldsUpNeitherTheConsumerNorOtherTurns(TestInfo test) {
        given(test, 2);
        CyclicBarrier allThree = new CyclicBarrier(3);
        ScriptedTool meet = ScriptedTool.safe("meet", (args, context) -> {
            allThree.await(20, TimeUnit.SECONDS); // only passes when the three calls run together
            return TextNode.valueOf("met");
        });
        executor = kafka.start(ToolRegistry.of(List.of(meet, tools.read)));

        String slow = kafka.call("turn-slow", "read", named("slow"));
        awaitFirstRead(() -> tools.events.contains("start slow"));
        List<String> meetings = List.of(kafka.call("turn-1", "meet", named("a")), kafka.call("turn-1", "meet", named("b")),
                kafka.call("turn-1", "meet", named("c")));

        kafka.awaitResults(meetings).forEach(result -> assertThat(result.value().output().asText()).isEqualTo("met"));
        assertThat(kafka.answered(slow)).isFalse();

        tools.open("slow");
        assertThat(kafka.awaitResult(slow).success()).isTrue();
    }

    @Test
    void aTurnsUnsafeCallRunsAloneAndInOrderWhileOtherTurnsProceed(TestInfo test) {
        given(test, 2);
        executor = kafka.start(ToolRegistry.of(List.of(tools.read, tools.write)));
        tools.open("r2", "other");

        String r1 = kafka.call("turn-1", "read", named("r1"));
        String w = kafka.call("turn-1", "write", named("w"));
        String r2 = kafka.call("turn-1", "read", named("r2"));
        String other = kafka.call("turn-2", "write", named("other"));

        assertThat(kafka.awaitResult(other).success()).isTrue();
        assertThat(kafka.answered(r1)).isFalse();
        tools.open("r1");
        await().until(() -> tools.events.contains("start w"));
        tools.open("w");

        List<String> turnOneOrder = kafka.awaitResults(List.of(r1, w, r2)).stream()
                .filter(result -> result.key().equals("turn-1")).map(result -> result.value().callId()).toList();
        assertThat(turnOneOrder).containsExactly(r1, w, r2);
        assertThat(tools.events).containsSubsequence("end r1", "start w", "end w", "start r2");
    }

    @Test
    void aCancelOnTheControlTopicAbortsTheTurnsRunningAndQueuedCalls(TestInfo test) {
        given(test, 2);
        executor = kafka.start(ToolRegistry.of(List.of(tools.read, tools.write)));
        String c1 = kafka.call("turn-1", "read", named("c1"));
        String c2 = kafka.call("turn-1", "read", named("c2"));
        String c3 = kafka.call("turn-1", "write", named("c3"));
        awaitFirstRead(() -> tools.events.containsAll(List.of("start c1", "start c2")));

        kafka.cancel("turn-1");

        for (ConsumerRecord<String, ToolResult> result : kafka.awaitResults(List.of(c1, c2, c3))) {
            assertThat(result.value().error().code()).isEqualTo(ToolErrors.ABORTED);
            assertThat(result.value().output().asText()).isEqualTo("Tool execution was aborted: user interrupted");
        }
        await().until(() -> tools.events.containsAll(List.of("interrupted c1", "interrupted c2")));
        assertThat(tools.events).doesNotContain("start c3");
    }

    /**
     * The user cancels, and the gateway, which has not read the cancel yet, releases the step's calls right after: each
     * call is read after its turn's cancel was written, and none may run, however late the cancel listener reads it.
     */
    @Test
    void callsWrittenAfterTheirTurnWasCancelledAreAbortedAndNeverRun(TestInfo test) {
        given(test, 2);
        executor = kafka.start(ToolRegistry.of(List.of(tools.read, tools.write)));
        List<String> calls = new ArrayList<>();
        for (int turn = 1; turn <= 4; turn++) {
            kafka.cancel("turn-" + turn);
            calls.add(kafka.call("turn-" + turn, "write", named("w" + turn)));
            calls.add(kafka.call("turn-" + turn, "read", named("r" + turn)));
            tools.open("w" + turn, "r" + turn);
        }

        for (ConsumerRecord<String, ToolResult> result : kafka.awaitResults(calls)) {
            assertThat(result.value().error().code()).isEqualTo(ToolErrors.ABORTED);
            assertThat(result.value().output().asText()).isEqualTo("Tool execution was aborted: user interrupted");
        }
        assertThat(tools.events).as("no call ran").isEmpty();
    }

    @Test
    void aHangingCallTimesOutAndIsCounted(TestInfo test) {
        given(test, 1);
        ScriptedTool hang = ScriptedTool.safe("hang", (args, context) -> {
            new CountDownLatch(1).await();
            return TextNode.valueOf("never");
        });
        executor = kafka.start(ToolRegistry.of(List.of(hang)), "timeout-ms.hang", "200");

        ToolResult result = kafka.awaitResult(kafka.call("turn-1", "hang", "{}"));

        assertThat(result.error().code()).isEqualTo(ToolErrors.TIMEOUT);
        await().until(() -> executor.metrics().value("timeouts-total", "hang") == 1);
        assertThat(executor.metrics().value("duration-max-ms", "hang")).isGreaterThanOrEqualTo(200);
    }

    @Test
    void withMaxInFlightCallsHeldFetchingPausesButPollingGoesOn(TestInfo test) {
        given(test, 1);
        executor = kafka.start(ToolRegistry.of(List.of(tools.read)), kafka.settings("max-in-flight", "2")
                .with("max.poll.interval.ms", "1000"));
        String a = kafka.call("turn-a", "read", named("a"));
        String b = kafka.call("turn-b", "read", named("b"));
        awaitFirstRead(() -> executor.metrics().value("paused-partitions", null) == 1);

        String c = kafka.call("turn-c", "read", named("c"));
        tools.open("c");
        // well past max.poll.interval.ms the two calls still run: the consumer kept polling and its partitions
        await().during(Duration.ofMillis(2500)).atMost(Duration.ofSeconds(10))
                .until(() -> executor.metrics().value("in-flight", null) == 2);
        assertThat(kafka.answered(c)).isFalse();
        assertThat(tools.events).doesNotContain("start c");

        tools.open("a");
        assertThat(kafka.awaitResult(a).success()).isTrue();
        assertThat(kafka.awaitResult(c).success()).isTrue();
        tools.open("b");
        assertThat(kafka.awaitResults(List.of(a, b, c))).hasSize(3);
        await().until(() -> executor.metrics().value("paused-partitions", null) == 0);
    }
}
