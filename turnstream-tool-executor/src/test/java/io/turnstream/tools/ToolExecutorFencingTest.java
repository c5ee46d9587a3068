package io.turnstream.tools;

import static io.turnstream.tools.GatedTools.named;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import io.turnstream.model.ToolResult;
import io.turnstream.runtime.EmbeddedKafkaBroker;
import io.turnstream.runtime.Settings;
import io.turnstream.testsupport.UsesBroker;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.function.BiConsumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.errors.FencedInstanceIdException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A fenced producer stops the executor only when another instance took its instance id over: a transaction the
 * coordinator aborts at its timeout (which fences the producer too, as a broker's failover once did to a live
 * executor) is published again and the executor goes on.
 */
@ExtendWith(SharedBroker.class)
@UsesBroker
class ToolExecutorFencingTest {

    private static EmbeddedKafkaBroker broker;

    private final GatedTools tools = new GatedTools();
    private KafkaToolsFixture kafka;
    private ToolExecutorService first;
    private ToolExecutorService second;

    @BeforeAll
    static void useTheSharedBroker(EmbeddedKafkaBroker shared) {
        broker = shared;
    }

    @AfterEach
    void stop() {
        for (ToolExecutorService executor : new ToolExecutorService[] {first, second}) {
            if (executor != null) {
                executor.close();
            }
        }
        kafka.close();
    }

    @Test
    void aTransactionTheCoordinatorAbortsAtItsTimeoutIsPublishedAgainAndTheExecutorGoesOn(TestInfo test) {
        // on one broker the commit then fails with InvalidTxnStateException: the producer cannot abort, so it is
        // replaced, and the batch is published again
        answeredOnceAcross(test, HoldUntilAborted::holdNext);
    }

    @Test
    void aProducerFencedWhileTheGroupStillGivesTheExecutorItsInstanceIdGoesOnWithANewProducer(TestInfo test) {
        ToolExecutorService executor = answeredOnceAcross(test, HoldUntilAborted::holdNextAndFence);
        assertThat(executor.metrics().value("timed-out-transactions-total", null))
                .as("fenced with its instance id still its own: went on, not stopped").isGreaterThanOrEqualTo(1);
    }

    /**
     * Holds the transaction of a non-idempotent call's result (its "started" mark committed before it ran) until the
     * coordinator aborts it at a 1 s timeout: every call gets one result, and that call its real one, published again
     * from the batch in hand, not OUTCOME_UNKNOWN as a restart would answer it.
     */
    private ToolExecutorService answeredOnceAcross(TestInfo test, BiConsumer<String, String> hold) {
        kafka = new KafkaToolsFixture(broker, test.getTestMethod().orElseThrow().getName(), 1);
        Settings settings = kafka.settings().with(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "1000")
                .with(ProducerConfig.INTERCEPTOR_CLASSES_CONFIG, HoldUntilAborted.class.getName());
        ToolExecutorConfig config = ToolExecutorConfig.from(settings);
        String transactionalId = config.groupId() + "-" + config.instanceId();
        first = kafka.start(ToolRegistry.of(List.of(tools.read, tools.write)), settings);
        tools.open("before", "held", "after");
        String before = kafka.call("turn-1", "read", named("before"));
        kafka.awaitResult(before);

        hold.accept(transactionalId, kafka.topics.toolResults());
        String held = kafka.call("turn-1", "write", named("held"));
        String after = kafka.call("turn-2", "read", named("after"));

        List<ConsumerRecord<String, ToolResult>> results = kafka.awaitResults(List.of(before, held, after));
        assertThat(HoldUntilAborted.heldUntilAborted(transactionalId)).as("the coordinator aborted the held transaction").isTrue();
        assertThat(results).extracting(r -> r.value().callId()).as("one result per call").containsExactlyInAnyOrder(before, held, after);
        ToolResult heldResult = results.stream().map(ConsumerRecord::value).filter(r -> r.callId().equals(held))
                .findFirst().orElseThrow();
        assertThat(heldResult.success()).as("the non-idempotent call's own result: %s", heldResult.output()).isTrue();
        assertThat(heldResult.output().asText()).isEqualTo("done held");
        assertThat(tools.events).filteredOn("start held"::equals).as("it ran once").hasSize(1);
        assertThat(first.stopped()).isNotDone();
        return first;
    }

    @Test
    void anotherExecutorWithTheSameInstanceIdStopsTheFirstAndAnswersItsCalls(TestInfo test) {
        kafka = new KafkaToolsFixture(broker, test.getTestMethod().orElseThrow().getName(), 1);
        tools.open("one", "two");
        first = kafka.start(ToolRegistry.of(List.of(tools.read)));
        String one = kafka.call("turn-1", "read", named("one"));
        kafka.awaitResult(one);

        second = kafka.start(ToolRegistry.of(List.of(tools.read)));
        String two = kafka.call("turn-2", "read", named("two"));

        await("the first executor stops").atMost(Duration.ofSeconds(60)).until(() -> first.stopped().isDone());
        Throwable stopped = catchThrowable(() -> first.stopped().join());
        assertThat(stopped).isInstanceOf(CompletionException.class);
        assertThat(stopped.getCause()).as("stopped as taken over").isInstanceOfAny(ProducerFencedException.class,
                FencedInstanceIdException.class);
        assertThat(kafka.awaitResults(List.of(one, two))).extracting(r -> r.value().callId()).containsExactlyInAnyOrder(one, two);
        assertThat(second.stopped()).isNotDone();
    }
}
