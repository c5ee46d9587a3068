package io.turnstream.gateway.ownership;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import io.turnstream.gateway.loop.TurnPublisher;
import io.turnstream.model.Json;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.Topics;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.ContractBroker;
import io.turnstream.runtime.ServiceMetrics;
import io.turnstream.runtime.Settings;
import io.turnstream.runtime.TenantClaims;
import io.turnstream.runtime.TraceContext;
import io.turnstream.testsupport.UsesBroker;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Why a broker's failover once fenced a live gateway (its sends and then its commit failed with
 * {@code InvalidProducerEpochException}, "Producer attempted to produce with an old epoch", and it took its own
 * partition over again, calling the model again for 42 turns): a transaction that outlives its
 * {@code transaction.timeout.ms} is aborted by the transaction coordinator, which bumps the producer's epoch as it
 * does so (Kafka's {@code TransactionCoordinator.abortTimedOutTransactions}, {@code prepareFenceProducerEpoch}),
 * although nobody else holds the partition. A broker's death holds a transaction open until the controllers fence
 * that broker ({@code broker.session.timeout.ms}, 9 s by default) and new leaders take over: longer than the 10 s the
 * gateway's turn producers had ({@code FailoverDefaults.FENCED_TRANSACTION_TIMEOUT_MS}, now 30 s). Here a turn
 * producer with a 1 s timeout holds its transaction open on a real broker (whose abort check runs every second) until
 * the coordinator aborts it; the turn's next write and the commit then fail as the cluster's did.
 */
@UsesBroker
class TransactionTimeoutFencingTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String GROUP = "transaction-timeout";
    private static final TopicPartition P0 = new TopicPartition(Topics.DEFAULTS.turnRequests(), 0);
    private static final TurnRequestRecord REQUEST = TurnRequestRecord.request("turn-1", "thread-1", "run-1", null,
            1, Json.MAPPER.createObjectNode().put("prompt", "hi"));

    private static ContractBroker broker;
    private static Properties kafka;

    @BeforeAll
    static void startBroker() throws Exception {
        broker = ContractBroker.start(1);
        kafka = broker.clientProperties();
    }

    @AfterAll
    static void stopBroker() {
        broker.close();
    }

    @Test
    void aTransactionOpenLongerThanItsTimeoutIsAbortedAndTheLiveOwnerFencedByTheEpochBump() {
        Properties shortTimeout = new Properties();
        shortTimeout.putAll(kafka);
        shortTimeout.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "1000");
        String transactionalId = GROUP + "-turns-0";
        try (ServiceMetrics metrics = ServiceMetrics.create("transaction-timeout-test", Settings.of(new Properties()));
             OwnedPartition owned = new OwnedPartition(P0, OwnedPartition.kafkaProducer(P0, shortTimeout, GROUP,
                     Duration.ofMillis(100), metrics), Topics.DEFAULTS, WireFormat.JSON, TenantClaims.UNSIGNED,
                     Clock.systemUTC());
             Admin admin = Admin.create(kafka)) {
            TurnPublisher turn = owned.publisherFor(REQUEST, TraceContext.fresh());
            turn.rawEvent("run-1", TraceContext.fresh(), new StreamPayload.ResponseStart("run-1", "turn-1", "thread-1",
                    null, "m", "simulated", 1L)).join();

            await("the coordinator aborts the transaction at its timeout").atMost(WAIT).until(() -> {
                TransactionState state = admin.describeTransactions(List.of(transactionalId)).description(
                        transactionalId).get().state();
                return state == TransactionState.COMPLETE_ABORT;
            });

            // the turn streams on, as the cluster's did: its write reaches the broker after the abort
            Throwable sent = catchThrowable(() -> turn.rawEvent("run-1", TraceContext.fresh(),
                    new StreamPayload.ResponseDone("run-1", ResponseStatus.COMPLETE, null, null)).join());
            assertThat(causes(sent)).as("\"Producer attempted to produce with an old epoch\": the abort bumped it")
                    .anyMatch(InvalidProducerEpochException.class::isInstance);
            Throwable commit = catchThrowable(() -> owned.commit(1, new ConsumerGroupMetadata(GROUP)));
            assertThat(causes(commit)).as("nobody else took the partition, yet its commit fails fenced")
                    .anyMatch(InvalidProducerEpochException.class::isInstance);
        }
    }

    private static List<Throwable> causes(Throwable failure) {
        List<Throwable> causes = new ArrayList<>();
        for (Throwable cause = failure; cause != null && !causes.contains(cause); cause = cause.getCause()) {
            causes.add(cause);
        }
        return causes;
    }
}
