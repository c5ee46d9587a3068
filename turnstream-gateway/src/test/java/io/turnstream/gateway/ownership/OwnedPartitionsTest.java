package io.turnstream.gateway.ownership;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import io.turnstream.gateway.loop.TurnProgress;
import io.turnstream.gateway.loop.TurnPublisher;
import io.turnstream.gateway.loop.TurnRegistry;
import io.turnstream.gateway.provider.StepOutcome;
import io.turnstream.gateway.provider.ToolCallRequest;
import io.turnstream.gateway.turn.TurnPhase;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.model.ControlMessage;
import io.turnstream.model.DeadLetterHeaders;
import io.turnstream.model.Json;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.ToolResult;
import io.turnstream.model.Topics;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.TenantClaims;
import io.turnstream.runtime.TraceContext;
import io.turnstream.schema.RegistryOutage;
import io.turnstream.schema.SchemaRegistryException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.InvalidTxnStateException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The ownership loop's decisions without a broker and without real waits: the group consumer is
 * {@link Log} (an in-memory partition), each partition's transactional producer a Kafka
 * {@link MockProducer}, time a {@link ManualClock}, and the turns a {@link TurnRegistry} whose
 * turns the test ends (or that stop when asked to hand over).
 */
class OwnedPartitionsTest {

    private static final Topics TOPICS = Topics.DEFAULTS;
    private static final TopicPartition P0 = new TopicPartition(TOPICS.turnRequests(), 0);
    private static final OwnershipConfig CONFIG = new OwnershipConfig("turnstream-gateway", Duration.ofMillis(100),
            Duration.ofSeconds(30), Duration.ofSeconds(5), TenantClaims.UNSIGNED);

    private final ManualClock clock = new ManualClock(1_000_000);
    private final Log log = new Log();
    private final Producers producers = new Producers();
    private final Turns turns = new Turns();
    private OwnedPartitions partitions = new OwnedPartitions(TOPICS, WireFormat.JSON, CONFIG, turns, log, producers,
            clock);

    @Test
    void anAssignedPartitionResumesEveryUnfinishedTurnFromItsCommittedOffsetWithItsSteps() {
        log.position = 5;
        log.append(5, request("turn-a"));
        log.append(6, step("turn-a", 1));
        log.append(7, request("turn-b"));

        partitions.assigned(List.of(P0));

        assertThat(producers.opened).hasSize(1);
        assertThat(producers.opened.get(0).transactionInitialized()).isTrue();
        assertThat(turns.runs).extracting(Run::turnId, Run::offset, Run::resume, Run::steps)
                .containsExactly(tuple("turn-a", 5L, true, 1),
                        tuple("turn-b", 7L, true, 0));
        assertThat(log.position).as("read on after what was caught up").isEqualTo(8);
        assertThat(partitions.healthy()).isTrue();
    }

    /**
     * The records of a takeover's unfinished turns on the other topics are read once for all of them (before, once per
     * turn), and only once every one is registered: what is written after the read reaches them through the inbox.
     */
    @Test
    void aTakeoverReadsTheRecordsOfItsUnfinishedTurnsOnceAllAreRegistered() {
        log.position = 5;
        log.append(5, request("turn-a"));
        log.append(6, request("turn-b"));
        log.append(7, step("turn-a", 1));
        log.append(8, request("turn-c"));
        List<Integer> registeredAtRead = new ArrayList<>();
        log.onTurnRead = () -> registeredAtRead.add(turns.registry.runningCount());

        partitions.assigned(List.of(P0));
        TurnHistory history = partitions.owner(P0).history();
        for (String turnId : List.of("turn-c", "turn-a", "turn-b")) {
            history.progress(request(turnId), List.of(), "m", turns.active(turnId));
        }

        assertThat(log.resumedTogether).as("one set of reads for the takeover's turns")
                .containsExactly(List.of("turn-a", "turn-b", "turn-c"));
        assertThat(registeredAtRead).as("each turn's read, once all three are registered").containsOnly(3);
    }

    /**
     * A takeover of several partitions fences every previous owner at once (each producer's initTransactions waits
     * here until all three have started: one after the other, the first would wait alone and time out), reads the
     * partitions only once all are fenced, in one read, and resumes the turns of all of them, whose records on the
     * other topics are read once for all.
     */
    @Test
    void aTakeoverOfSeveralPartitionsFencesThemTogetherThenReadsThemInOneReadAndResumesEveryTurn() {
        List<TopicPartition> three = List.of(P0, partition(1), partition(2));
        CountDownLatch allFencing = new CountDownLatch(three.size());
        producers.onInit = () -> {
            allFencing.countDown();
            try {
                if (!allFencing.await(30, TimeUnit.SECONDS)) {
                    throw new TimeoutException("the other partitions were not fenced meanwhile");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        List<Boolean> fencedAtRead = new ArrayList<>();
        log.onRead = () -> three.forEach(partition ->
                fencedAtRead.add(producers.byPartition.get(partition).transactionInitialized()));
        log.position = 5;
        log.append(5, request("turn-a"));
        log.records.add(log.record(partition(1), 0, request("turn-b")));
        log.records.add(log.record(partition(2), 0, request("turn-c")));
        log.records.add(log.record(partition(2), 1, step("turn-c", 1)));

        partitions.assigned(three);

        assertThat(partitions.owned()).containsExactlyInAnyOrderElementsOf(three);
        assertThat(fencedAtRead).as("every partition fenced before any is read").containsOnly(true).hasSize(3);
        assertThat(log.reads).as("one read of the three").containsExactly(Set.copyOf(three));
        assertThat(turns.runs).extracting(Run::turnId, Run::offset, Run::resume, Run::steps)
                .containsExactlyInAnyOrder(tuple("turn-a", 5L, true, 0), tuple("turn-b", 0L, true, 0),
                        tuple("turn-c", 0L, true, 1));
        assertThat(log.position).isEqualTo(6);
        assertThat(log.otherPositions).containsEntry(partition(1), 1L).containsEntry(partition(2), 2L);
        assertThat(partitions.owner(P0).history()).as("one history for the takeover's turns")
                .isSameAs(partitions.owner(partition(2)).history());
        partitions.owner(P0).history().progress(request("turn-a"), List.of(), "m", turns.active("turn-a"));
        assertThat(log.resumedTogether).hasSize(1);
        assertThat(log.resumedTogether.get(0)).containsExactlyInAnyOrder("turn-a", "turn-b", "turn-c");
    }

    /** A partition whose previous owner cannot be fenced yet waits for a retry; the others are taken over now. */
    @Test
    void aPartitionThatCannotBeFencedIsRetriedWhileTheOthersOfItsTakeoverGoOn() {
        producers.failingInitsOf.put(partition(1), 1);
        log.position = 5;
        log.append(5, request("turn-a"));
        log.records.add(log.record(partition(1), 0, request("turn-b")));

        partitions.assigned(List.of(P0, partition(1)));

        assertThat(partitions.owned()).containsExactly(P0);
        assertThat(partitions.retrying()).containsExactly(partition(1));
        assertThat(log.paused).containsExactly(partition(1));
        assertThat(log.reads).containsExactly(Set.of(P0));
        assertThat(turns.runs).extracting(Run::turnId).containsExactly("turn-a");

        clock.advance(OwnedPartitions.FIRST_RETRY_BACKOFF);
        partitions.retryDue();
        assertThat(partitions.owned()).containsExactlyInAnyOrder(P0, partition(1));
        assertThat(log.paused).isEmpty();
        assertThat(turns.runs).extracting(Run::turnId).containsExactly("turn-a", "turn-b");
    }

    /** A takeover's read that cannot find one partition's end reads the others: only that one is tried again. */
    @Test
    void aPartitionThatCannotBeReadIsRetriedAloneWhileTheOthersOfItsTakeoverGoOn() {
        log.position = 5;
        log.append(5, request("turn-a"));
        log.records.add(log.record(partition(1), 0, request("turn-b")));
        log.records.add(log.record(partition(2), 0, request("turn-c")));
        log.endUnknown.add(partition(1));

        partitions.assigned(List.of(P0, partition(1), partition(2)));

        assertThat(partitions.owned()).containsExactlyInAnyOrder(P0, partition(2));
        assertThat(partitions.retrying()).containsExactly(partition(1));
        assertThat(log.paused).containsExactly(partition(1));
        assertThat(turns.runs).extracting(Run::turnId).containsExactlyInAnyOrder("turn-a", "turn-c");

        clock.advance(OwnedPartitions.FIRST_RETRY_BACKOFF);
        partitions.retryDue();
        assertThat(log.reads).as("the retry reads the partition that failed alone")
                .containsExactly(Set.of(P0, partition(1), partition(2)), Set.of(partition(1)));
        assertThat(partitions.owned()).containsExactlyInAnyOrder(P0, partition(1), partition(2));
        assertThat(turns.runs).extracting(Run::turnId).containsExactlyInAnyOrder("turn-a", "turn-c", "turn-b");
        assertThat(partitions.healthy()).isTrue();
    }

    @Test
    void aNewRequestStartsATurnWhileStepRecordsAndUnreadableRecordsStartNothing() {
        partitions.assigned(List.of(P0));

        partitions.record(log.record(0, request("turn-a")));
        partitions.record(log.record(1, step("turn-a", 1)));
        partitions.record(new ConsumerRecord<>(P0.topic(), 0, 2, "thread", "{not json".getBytes(StandardCharsets.UTF_8)));
        partitions.record(new ConsumerRecord<>(P0.topic(), 1, 3, "thread", Json.toBytes(request("turn-other"))));

        assertThat(turns.runs).extracting(Run::turnId, Run::resume).containsExactly(
                tuple("turn-a", false));
    }

    /**
     * A record no owner can use (every next owner would fail on it the same way) goes to the dead-letter topic, as it
     * was, with why and where it was read, in the partition's transaction; the partition's other turns go on.
     */
    @Test
    void anUnusableRecordIsDeadLetteredWithItsReasonAndThePartitionsOtherTurnsGoOn() {
        partitions.assigned(List.of(P0));
        byte[] notJson = "{not json".getBytes(StandardCharsets.UTF_8);

        partitions.record(new ConsumerRecord<>(P0.topic(), 0, 0, "thread-1", notJson));
        partitions.record(log.record(1, TurnRequestRecord.request(null, "thread-1", "run-x", null, 1_000,
                Json.MAPPER.createObjectNode())));
        partitions.record(log.record(2, request("turn-b")));
        log.position = 3;
        partitions.commitAll();

        assertThat(turns.runs).extracting(Run::turnId).containsExactly("turn-b");
        List<ProducerRecord<String, byte[]>> sent = producers.opened.get(0).history();
        assertThat(sent).as("committed with the partition's offset").allMatch(r -> r.topic().equals(TOPICS.deadLetters()));
        assertThat(sent).extracting(r -> header(r, DeadLetterHeaders.SOURCE))
                .containsExactly(P0.topic() + "-0@0", P0.topic() + "-0@1");
        assertThat(header(sent.get(0), DeadLetterHeaders.REASON)).startsWith("not a turn request record: ");
        assertThat(header(sent.get(1), DeadLetterHeaders.REASON))
                .isEqualTo("a turn request record needs its type, turnId, threadId and runId");
        assertThat(sent.get(0).value()).isEqualTo(notJson);
        assertThat(lastCommittedOffset(producers.opened.get(0))).as("past them, to the running turn").isEqualTo(2);
    }

    /**
     * A step record whose checkpoint cannot be read back made every owner's resume fail (the turn was handed on and
     * on, its permit held): it is dead-lettered, and its turn ends with an error instead of calling that step again.
     */
    @Test
    void aTurnWithAStepRecordThatCannotBeReadEndsAtTakeoverAndTheOthersResume() {
        log.position = 5;
        log.append(5, request("turn-a"));
        log.append(6, request("turn-a").stepDone(1, Json.MAPPER.createObjectNode().put("toolCalls", "none")));
        log.append(7, request("turn-b"));
        log.append(8, step("turn-b", 1));

        partitions.assigned(List.of(P0));
        partitions.commitAll();

        assertThat(turns.runs).extracting(Run::turnId, Run::resume, Run::steps, run -> run.unresumable() != null)
                .containsExactly(tuple("turn-a", true, 0, true), tuple("turn-b", true, 1, false));
        assertThat(turns.runs.get(0).unresumable()).isEqualTo("its record at " + P0.topic() + "-0@6 cannot be used (it "
                + "is on " + TOPICS.deadLetters() + ")");
        List<ProducerRecord<String, byte[]>> sent = producers.opened.get(0).history();
        assertThat(sent).hasSize(1);
        assertThat(header(sent.get(0), DeadLetterHeaders.REASON)).startsWith("the checkpoint of step 1 cannot be read: ");
    }

    /**
     * The group offset stays at the earliest unfinished request, so the next owner reads an unusable record after it
     * again: its dead letter committed with that offset (its metadata says so), it is not sent a second time, and
     * still starts nothing.
     */
    @Test
    void anUnusableRecordTheNextOwnerReadsAgainIsDeadLetteredOnce() {
        log.position = 5;
        log.append(5, request("turn-a"));
        log.records.add(new ConsumerRecord<>(P0.topic(), 0, 6, "thread-1", "{not json".getBytes(StandardCharsets.UTF_8)));
        log.append(7, request("turn-b"));
        partitions.assigned(List.of(P0));
        partitions.commitAll();
        assertThat(producers.opened.get(0).history()).extracting(ProducerRecord::topic)
                .containsExactly(TOPICS.deadLetters());
        OffsetAndMetadata committed = lastCommitted(producers.opened.get(0));
        assertThat(committed.offset()).as("at the unfinished turn-a, before the unusable record").isEqualTo(5);

        // another gateway gets the partition from its committed offset
        log.position = committed.offset();
        log.committedMetadata = committed.metadata();
        Turns next = new Turns();
        OwnedPartitions nextOwner = new OwnedPartitions(TOPICS, WireFormat.JSON, CONFIG, next, log, producers, clock);
        nextOwner.assigned(List.of(P0));
        nextOwner.commitAll();

        assertThat(next.runs).extracting(Run::turnId).containsExactly("turn-a", "turn-b");
        assertThat(producers.opened.get(1).history()).as("not dead-lettered again").isEmpty();
    }

    @Test
    void theGroupOffsetStaysAtTheEarliestUnfinishedRequestUntilItsTurnEnds() {
        partitions.assigned(List.of(P0));
        partitions.record(log.record(5, request("turn-a")));
        partitions.record(log.record(7, request("turn-b")));
        log.position = 8;
        MockProducer<String, byte[]> producer = producers.opened.get(0);

        partitions.commitAll();
        assertThat(lastCommittedOffset(producer)).isEqualTo(5);

        turns.end("turn-a");
        partitions.commitAll();
        assertThat(lastCommittedOffset(producer)).isEqualTo(7);

        turns.end("turn-b");
        partitions.commitAll();
        assertThat(lastCommittedOffset(producer)).isEqualTo(8);

        long commits = producer.commitCount();
        partitions.commitAll();
        assertThat(producer.commitCount()).as("nothing sent, offset unchanged: no empty transaction").isEqualTo(commits);
    }

    @Test
    void anInitProducerIdTimeoutPausesThePartitionAndTheTakeoverIsRetriedAfterABackoffThatDoubles() {
        log.position = 5;
        log.append(5, request("turn-a"));
        producers.failingInits = 2;

        partitions.assigned(List.of(P0));
        assertThat(partitions.owned()).isEmpty();
        assertThat(partitions.retrying()).containsExactly(P0);
        assertThat(log.paused).containsExactly(P0);
        assertThat(partitions.healthy()).isFalse();
        assertThat(producers.opened.get(0).closed()).as("the failed producer is closed").isTrue();

        partitions.retryDue();
        assertThat(producers.opened).as("not before the backoff").hasSize(1);

        clock.advance(OwnedPartitions.FIRST_RETRY_BACKOFF);
        partitions.retryDue();
        assertThat(producers.opened).hasSize(2);
        assertThat(partitions.retrying()).as("failed again").containsExactly(P0);

        clock.advance(OwnedPartitions.FIRST_RETRY_BACKOFF);
        partitions.retryDue();
        assertThat(producers.opened).as("the second backoff is twice the first").hasSize(2);

        clock.advance(OwnedPartitions.FIRST_RETRY_BACKOFF);
        partitions.retryDue();
        assertThat(partitions.owned()).containsExactly(P0);
        assertThat(log.paused).isEmpty();
        assertThat(partitions.healthy()).isTrue();
        assertThat(turns.runs).extracting(Run::turnId, Run::resume)
                .containsExactly(tuple("turn-a", true));
    }

    @Test
    void aPartitionThatCannotBeReadIsRetriedWithItsProducerClosed() {
        log.position = 5;
        log.append(5, request("turn-a"));
        log.failingReads = 1;

        partitions.assigned(List.of(P0));
        assertThat(partitions.retrying()).containsExactly(P0);
        assertThat(producers.opened.get(0).closed()).isTrue();
        assertThat(turns.runs).isEmpty();

        clock.advance(OwnedPartitions.FIRST_RETRY_BACKOFF);
        partitions.retryDue();
        assertThat(turns.runs).extracting(Run::turnId).containsExactly("turn-a");
        assertThat(partitions.healthy()).isTrue();
    }

    /**
     * A schema registry that cannot be reached is not the record's fault: a request read meanwhile is not
     * dead-lettered. The partition is let go (the consumer back at the committed offset, paused) and taken over again after the
     * backoff, which reads the request again and runs its turn.
     */
    @Test
    void aRequestReadWhileTheSchemaRegistryIsDownIsNotDeadLetteredAndRunsWhenThePartitionIsTakenOverAgain() {
        RegistryOutage format = requestReadDuringAnOutage();
        partitions.commitAll();

        assertThat(producers.opened.get(0).history()).as("nothing dead-lettered").isEmpty();
        assertThat(producers.opened.get(0).consumerGroupOffsetsHistory()).as("the offset not moved past it").isEmpty();
        assertThat(turns.runs).isEmpty();
        assertThat(partitions.owned()).isEmpty();
        assertThat(partitions.retrying()).containsExactly(P0);
        assertThat(partitions.healthy()).isFalse();
        assertThat(log.rewound).containsExactly(P0);
        assertThat(log.paused).containsExactly(P0);

        format.down = false;
        clock.advance(OwnedPartitions.FIRST_RETRY_BACKOFF);
        partitions.retryDue();

        assertThat(turns.runs).extracting(Run::turnId, Run::offset, Run::unresumable)
                .containsExactly(tuple("turn-a", 5L, null));
        assertThat(producers.opened.get(1).history()).isEmpty();
        assertThat(partitions.healthy()).isTrue();
    }

    /**
     * At a takeover too: a registry that cannot be reached dead-letters none of the partition's records and marks none
     * of its turns not resumable; the takeover is tried again after the backoff and resumes them with their steps.
     */
    @Test
    void aTakeoverWhileTheSchemaRegistryIsDownIsRetriedAndLosesNoTurn() {
        RegistryOutage format = new RegistryOutage();
        partitions = new OwnedPartitions(TOPICS, format, CONFIG, turns, log, producers, clock);
        log.position = 5;
        log.append(5, request("turn-a"));
        log.append(6, step("turn-a", 1));

        format.down = true;
        partitions.assigned(List.of(P0));

        assertThat(producers.opened.get(0).history()).as("nothing dead-lettered").isEmpty();
        assertThat(producers.opened.get(0).closed()).isTrue();
        assertThat(turns.runs).isEmpty();
        assertThat(partitions.retrying()).containsExactly(P0);
        assertThat(log.position).as("not sought past the records").isEqualTo(5);

        format.down = false;
        clock.advance(OwnedPartitions.FIRST_RETRY_BACKOFF);
        partitions.retryDue();

        assertThat(turns.runs).extracting(Run::turnId, Run::resume, Run::steps, Run::unresumable)
                .containsExactly(tuple("turn-a", true, 1, null));
        assertThat(producers.opened.get(1).history()).isEmpty();
        assertThat(partitions.healthy()).isTrue();
    }

    @Test
    void aFailedCommitTakesThePartitionOverAgainFromItsCommittedOffset() {
        log.position = 5;
        log.append(5, request("turn-a"));
        partitions.assigned(List.of(P0));
        TurnRegistry.ActiveTurn first = turns.active("turn-a");
        producers.opened.get(0).commitTransactionException = new TimeoutException(
                "Timeout expired after 10000ms while awaiting EndTxn");
        log.committed = 5;

        partitions.commitAll();

        assertThat(first.handover).as("the turn stops here and is resumed from Kafka").isDone();
        assertThat(log.rewound).containsExactly(P0);
        assertThat(producers.opened).hasSize(2);
        assertThat(partitions.owned()).containsExactly(P0);
        assertThat(turns.runs).extracting(Run::turnId, Run::resume).containsExactly(
                tuple("turn-a", true), tuple("turn-a", true));
    }

    /**
     * After a rebalance that leaves the partition here, the group refuses an offset committed with the generation
     * before it (the consumer learns the new one only when the rebalance completes in a later poll). Only the
     * offset's own transaction is refused: the turns' writes are committed, the turns go on here (no step is called
     * again), and the offset commits at the next commit.
     */
    @Test
    void anOffsetTheGroupRefusesAfterARebalanceCostsTheTurnsNothingAndCommitsNextTime() {
        partitions.assigned(List.of(P0));
        partitions.record(log.record(5, request("turn-a")));
        log.position = 6;
        TurnRegistry.ActiveTurn turn = turns.active("turn-a");
        MockProducer<String, byte[]> producer = producers.opened.get(0);
        partitions.owner(P0).publisherFor(request("turn-a"), TraceContext.fresh()).rawEvent("run-turn-a",
                TraceContext.fresh(), new StreamPayload.ResponseDone("run-turn-a", ResponseStatus.COMPLETE, null, null));
        producer.sendOffsetsToTransactionException = new CommitFailedException(
                "Transaction offset Commit failed due to consumer group metadata mismatch: Specified group "
                        + "generation id is not valid.");

        partitions.commitAll();

        assertThat(producer.history()).as("the turn's write is committed").hasSize(1);
        assertThat(producer.consumerGroupOffsetsHistory()).as("the offset is not").isEmpty();
        assertThat(turn.handover).as("the turn goes on here").isNotDone();
        assertThat(turn.cancel.isCancelled()).isFalse();
        assertThat(log.rewound).isEmpty();
        assertThat(producers.opened).as("not taken over again").hasSize(1);
        assertThat(partitions.owned()).containsExactly(P0);

        producer.sendOffsetsToTransactionException = null;
        partitions.commitAll();

        assertThat(lastCommittedOffset(producer)).isEqualTo(5);
        assertThat(turns.runs).extracting(Run::turnId).containsExactly("turn-a");
    }

    /** A dead letter commits with the offset whose metadata counts it: refused with it, it is sent again with it. */
    @Test
    void aDeadLetterWhoseOffsetTheGroupRefusedCommitsOnceWithTheNextOffset() {
        partitions.assigned(List.of(P0));
        partitions.record(new ConsumerRecord<>(P0.topic(), 0, 0, "thread-1",
                "{not json".getBytes(StandardCharsets.UTF_8)));
        log.position = 1;
        MockProducer<String, byte[]> producer = producers.opened.get(0);
        producer.sendOffsetsToTransactionException = new CommitFailedException("generation id is not valid");

        partitions.commitAll();
        assertThat(producer.history()).as("aborted with the refused offset").isEmpty();

        producer.sendOffsetsToTransactionException = null;
        partitions.commitAll();
        partitions.commitAll();

        assertThat(producer.history()).extracting(ProducerRecord::topic).containsExactly(TOPICS.deadLetters());
        assertThat(lastCommitted(producer).metadata()).isEqualTo("dead-lettered-before=1");
        assertThat(lastCommittedOffset(producer)).isEqualTo(1);
    }

    /**
     * A turn released a call in the open transaction and was cancelled before it committed: committed, the release
     * would reach the tool executor after the cancel was accepted. The commit is refused and the partition taken
     * over again from Kafka, where the cancel is on {@code llm.control}; a release committed before the cancel stays.
     */
    @Test
    void aTransactionHoldingACallReleasedByATurnCancelledSinceIsNotCommitted() {
        partitions.assigned(List.of(P0));
        log.append(5, request("turn-a"));
        partitions.record(log.records.get(0));
        log.position = 6;
        log.committed = 5;
        TurnPublisher publisher = partitions.owner(P0).publisherFor(request("turn-a"), TraceContext.fresh());
        MockProducer<String, byte[]> producer = producers.opened.get(0);
        publisher.rawEvent("run-turn-a", TraceContext.fresh(), call("call-1").itemDone("sim"));
        partitions.commitAll();
        long commits = producer.commitCount();

        publisher.rawEvent("run-turn-a", TraceContext.fresh(), call("call-2").itemDone("sim"));
        turns.active("turn-a").cancel.cancel("the user stopped it");
        partitions.commitAll();

        assertThat(producer.commitCount()).as("the second release is not committed").isEqualTo(commits);
        assertThat(producer.transactionAborted()).isTrue();
        assertThat(producer.history()).as("the release committed before the cancel stays").hasSize(1);
        assertThat(log.rewound).containsExactly(P0);
        assertThat(turns.runs).extracting(Run::turnId, Run::resume).containsExactly(
                tuple("turn-a", false), tuple("turn-a", true));
    }

    /** A turn cancelled after its release committed: nothing to hold back, the next commit goes through. */
    @Test
    void aTurnCancelledAfterItsReleaseCommittedCommitsAsUsual() {
        partitions.assigned(List.of(P0));
        partitions.record(log.record(5, request("turn-a")));
        log.position = 6;
        TurnPublisher publisher = partitions.owner(P0).publisherFor(request("turn-a"), TraceContext.fresh());
        MockProducer<String, byte[]> producer = producers.opened.get(0);
        publisher.rawEvent("run-turn-a", TraceContext.fresh(), call("call-1").itemDone("sim"));
        partitions.commitAll();

        turns.active("turn-a").cancel.cancel("the user stopped it");
        publisher.rawEvent("run-turn-a", TraceContext.fresh(), new StreamPayload.ResponseDone("run-turn-a",
                ResponseStatus.ABORTED, null, null));
        partitions.commitAll();

        assertThat(producer.history()).hasSize(2);
        assertThat(log.rewound).isEmpty();
    }

    /**
     * Transactions v2: the coordinator aborts a transaction open past its timeout with an epoch bump, which the next
     * write, a commit with no send in flight, or a strictly checked request meets first.
     */
    static Stream<RuntimeException> coordinatorAborts() {
        return Stream.of(new InvalidProducerEpochException("Producer attempted to produce with an old epoch"),
                new InvalidTxnStateException("The producer attempted a transactional operation in an invalid state."),
                new ProducerFencedException("There is a newer producer with the same transactionalId"));
    }

    /**
     * A fenced commit: the coordinator aborted a transaction open past its timeout, or another gateway owns the partition
     * now. The partition is let go at once (another owner is not fenced back) and taken over again after the backoff,
     * by when the consumer's polls have said whether the group still gives it here: here it does, and its turns are
     * resumed from Kafka.
     */
    @ParameterizedTest
    @MethodSource("coordinatorAborts")
    void aFencedCommitLetsThePartitionGoAndTakesItOverAgainAfterTheBackoffWhileTheGroupStillGivesItHere(
            RuntimeException aborted) {
        log.position = 5;
        log.append(5, request("turn-a"));
        partitions.assigned(List.of(P0));
        TurnRegistry.ActiveTurn first = turns.active("turn-a");
        producers.opened.get(0).commitTransactionException = aborted;
        log.committed = 5;

        partitions.commitAll();

        assertThat(first.handover).as("the turn stops here and is resumed from Kafka").isDone();
        assertThat(partitions.owned()).as("let go: not fenced back at once").isEmpty();
        assertThat(producers.opened).hasSize(1);
        assertThat(log.paused).containsExactly(P0);
        assertThat(partitions.retrying()).containsExactly(P0);

        clock.advance(OwnedPartitions.FIRST_RETRY_BACKOFF);
        partitions.retryDue();

        assertThat(log.rewound).containsExactly(P0);
        assertThat(partitions.owned()).as("still this gateway's: nobody else would resume its turns")
                .containsExactly(P0);
        assertThat(turns.runs).extracting(Run::turnId, Run::resume).containsExactly(
                tuple("turn-a", true), tuple("turn-a", true));
    }

    @Test
    void aFencedCommitOfAPartitionTheGroupGaveAnotherGatewayNeverFencesThatOneBack() {
        log.position = 5;
        log.append(5, request("turn-a"));
        partitions.assigned(List.of(P0));
        producers.opened.get(0).commitTransactionException = new ProducerFencedException(
                "There is a newer producer with the same transactionalId");

        partitions.commitAll();
        // the next poll: the consumer learns the partition is lost
        partitions.lost(List.of(P0));
        clock.advance(OwnedPartitions.MAX_RETRY_BACKOFF);
        partitions.retryDue();

        assertThat(producers.opened).as("no second initTransactions").hasSize(1);
        assertThat(partitions.owned()).isEmpty();
        assertThat(partitions.healthy()).isTrue();
    }

    /** A turn's end that could not be written: its transaction is refused, and the partition taken over after a backoff. */
    @Test
    void aTransactionLackingATurnsEndIsRefusedAndThePartitionTakenOverAgainAfterTheBackoff() {
        log.position = 5;
        log.append(5, request("turn-a"));
        partitions.assigned(List.of(P0));
        TurnRegistry.ActiveTurn first = turns.active("turn-a");
        TurnPublisher publisher = partitions.owner(P0).publisherFor(request("turn-a"), TraceContext.fresh());
        publisher.rawEvent("run-turn-a", TraceContext.fresh(), call("call-1").itemDone("sim"));
        publisher.failTransaction(new IllegalStateException("the schema registry is unreachable"));

        partitions.commitAll();

        assertThat(producers.opened.get(0).commitCount()).as("nothing of it committed").isZero();
        assertThat(first.handover).isDone();
        assertThat(partitions.retrying()).containsExactly(P0);
        clock.advance(OwnedPartitions.FIRST_RETRY_BACKOFF);
        partitions.retryDue();
        assertThat(turns.runs).extracting(Run::turnId, Run::resume).containsExactly(
                tuple("turn-a", true), tuple("turn-a", true));
    }

    /**
     * A turn that cannot run now (what Kafka holds of it cannot be read while the schema registry cannot be reached):
     * the partition is let go as when a commit fails, its other turns stopped, and taken over again after the backoff,
     * which resumes them all.
     */
    @Test
    void aTurnThatCannotRunNowHasItsPartitionTakenOverAgainAfterTheBackoff() {
        log.position = 5;
        log.append(5, request("turn-a"));
        log.append(6, request("turn-b"));
        partitions.assigned(List.of(P0));
        TurnRegistry.ActiveTurn other = turns.active("turn-b");

        partitions.owner(P0).cannotRunNow("turn-a", new SchemaRegistryException("schema registry cannot be reached",
                -1, null));
        partitions.commitAll();

        assertThat(producers.opened.get(0).commitCount()).as("nothing of it committed").isZero();
        assertThat(other.handover).as("the partition's other turns stop too").isDone();
        assertThat(log.rewound).containsExactly(P0);
        assertThat(partitions.retrying()).containsExactly(P0);
        assertThat(partitions.healthy()).isFalse();
        clock.advance(OwnedPartitions.FIRST_RETRY_BACKOFF);
        partitions.retryDue();
        assertThat(turns.runs).extracting(Run::turnId, Run::resume).containsExactly(tuple("turn-a", true),
                tuple("turn-b", true), tuple("turn-a", true), tuple("turn-b", true));
        assertThat(partitions.healthy()).isTrue();
    }

    /**
     * A registry outage that outlasts the takeovers: each takeover succeeds, and its resumed turn cannot run again. The
     * partition has made no progress, so the backoff doubles at every retake instead of starting over (before, it was
     * taken over, its producer fenced again, every second for as long as the outage lasted). A step its turn commits
     * is progress: the next failure backs off from the start again.
     */
    @Test
    void aTurnThatCannotRunNowAtEveryTakeoverBacksOffLongerUntilAStepOfThePartitionCommits() {
        log.position = 5;
        log.append(5, request("turn-a"));
        partitions.assigned(List.of(P0));

        for (int backoffSeconds : List.of(1, 2, 4, 8)) {
            cannotRunNow("turn-a");
            assertTakenOverAgainAfter(Duration.ofSeconds(backoffSeconds));
        }
        assertThat(turns.runs).as("resumed at every takeover").hasSize(5);

        // the registry is back: the turn commits a step, then cannot run again
        partitions.owner(P0).publisherFor(request("turn-a"), TraceContext.fresh())
                .stepDone(1, Json.MAPPER.createObjectNode());
        partitions.commitAll();
        assertThat(producers.opened.get(4).history()).as("the step committed").hasSize(1);
        cannotRunNow("turn-a");
        assertTakenOverAgainAfter(OwnedPartitions.FIRST_RETRY_BACKOFF);
    }

    /**
     * The same for a request read during the outage: the takeovers after it read it again and fail again, each after
     * a backoff twice the one before; the first after the outage runs its turn.
     */
    @Test
    void aRequestUnreadableAtEveryTakeoverOfAnOutageIsTriedAgainAfterABackoffThatDoubles() {
        RegistryOutage format = requestReadDuringAnOutage();

        for (int backoffSeconds : List.of(1, 2, 4, 8, 16, 30, 30)) {
            assertTakenOverAgainAfter(Duration.ofSeconds(backoffSeconds));
        }
        assertThat(turns.runs).isEmpty();

        format.down = false;
        assertTakenOverAgainAfter(OwnedPartitions.MAX_RETRY_BACKOFF);
        assertThat(turns.runs).extracting(Run::turnId, Run::offset).containsExactly(tuple("turn-a", 5L));
        assertThat(partitions.healthy()).isTrue();
    }

    /** P0 owned from offset 5, where a request is then read while the schema registry cannot be reached. */
    private RegistryOutage requestReadDuringAnOutage() {
        RegistryOutage format = new RegistryOutage();
        partitions = new OwnedPartitions(TOPICS, format, CONFIG, turns, log, producers, clock);
        log.position = 5;
        log.committed = 5;
        partitions.assigned(List.of(P0));
        log.append(5, request("turn-a"));
        format.down = true;
        log.position = 6;
        partitions.record(log.records.get(0));
        return format;
    }

    private void cannotRunNow(String turnId) {
        partitions.owner(P0).cannotRunNow(turnId, new SchemaRegistryException("schema registry cannot be reached",
                -1, null));
        partitions.commitAll();
        assertThat(partitions.owned()).isEmpty();
    }

    /** P0 is taken over again once {@code backoff} has passed, not a millisecond sooner. */
    private void assertTakenOverAgainAfter(Duration backoff) {
        int opened = producers.opened.size();
        clock.advance(backoff.minusMillis(1));
        partitions.retryDue();
        assertThat(producers.opened).as("not taken over again before %s", backoff).hasSize(opened);
        clock.advance(Duration.ofMillis(1));
        partitions.retryDue();
        assertThat(producers.opened).as("taken over again after %s", backoff).hasSize(opened + 1);
    }

    @Test
    void aRevokedPartitionHandsItsTurnsOverAtTheirStepBoundaryAndCommitsTheirRequestsOffset() {
        partitions.assigned(List.of(P0));
        partitions.record(log.record(5, request("turn-a")));
        log.position = 6;
        turns.stopWhenHandedOver = true;
        MockProducer<String, byte[]> producer = producers.opened.get(0);

        partitions.revoked(List.of(P0), CONFIG.rebalanceHandover());

        assertThat(turns.registry.running()).as("released here, without a final status").isEmpty();
        assertThat(turns.registry.status("turn-a")).isEmpty();
        assertThat(lastCommittedOffset(producer)).as("the next owner reads the request again").isEqualTo(5);
        assertThat(producer.closed()).isTrue();
        assertThat(partitions.owned()).isEmpty();
    }

    /** Found by the isolation benchmark: the last turn ending while its partition's handover commits. */
    @Test
    void aHandoverWhoseLastTurnEndsWhileItCommitsLetsThePartitionGo() {
        partitions.assigned(List.of(P0));
        partitions.record(log.record(5, request("turn-a")));
        log.position = 6;
        log.whenPositionRead = () -> {
            log.whenPositionRead = () -> { };
            turns.end("turn-a");
        };
        MockProducer<String, byte[]> producer = producers.opened.get(0);

        partitions.revoked(List.of(P0), CONFIG.rebalanceHandover());

        assertThat(turns.registry.running()).isEmpty();
        assertThat(lastCommittedOffset(producer)).as("past the ended turn's request").isEqualTo(6);
        assertThat(producer.closed()).isTrue();
        assertThat(partitions.owned()).isEmpty();
    }

    @Test
    void aTurnThatDoesNotReachItsStepBoundaryInTimeIsStoppedAndItsOpenTransactionAborted() {
        ManualClock ticking = new ManualClock(0, Duration.ofSeconds(1));
        partitions = new OwnedPartitions(TOPICS, WireFormat.JSON, CONFIG, turns, log, producers, ticking);
        partitions.assigned(List.of(P0));
        partitions.record(log.record(5, request("turn-a")));
        TurnRegistry.ActiveTurn turn = turns.active("turn-a");
        MockProducer<String, byte[]> producer = producers.opened.get(0);

        partitions.revoked(List.of(P0), Duration.ofSeconds(5));

        assertThat(turn.handover).isDone();
        assertThat(turn.cancel.isCancelled()).as("stopped where it is").isTrue();
        assertThat(turn.cancel.reason()).isEqualTo("handed over to another gateway");
        assertThat(producer.closed()).isTrue();
    }

    @Test
    void aLostPartitionStopsItsTurnsWithoutCommitting() {
        partitions.assigned(List.of(P0));
        partitions.record(log.record(5, request("turn-a")));
        TurnRegistry.ActiveTurn turn = turns.active("turn-a");
        MockProducer<String, byte[]> producer = producers.opened.get(0);

        partitions.lost(List.of(P0));

        assertThat(turn.cancel.isCancelled()).isTrue();
        assertThat(producer.commitCount()).isZero();
        assertThat(producer.closed()).isTrue();
    }

    @Test
    void aRevokedPartitionThatWaitsForItsTakeoverIsForgotten() {
        producers.failingInits = 1;
        partitions.assigned(List.of(P0));
        assertThat(partitions.healthy()).isFalse();

        partitions.revoked(List.of(P0), CONFIG.rebalanceHandover());

        assertThat(partitions.retrying()).isEmpty();
        assertThat(partitions.healthy()).isTrue();
        clock.advance(OwnedPartitions.MAX_RETRY_BACKOFF);
        partitions.retryDue();
        assertThat(producers.opened).as("no takeover of a partition that is not ours").hasSize(1);
    }

    private static TopicPartition partition(int number) {
        return new TopicPartition(TOPICS.turnRequests(), number);
    }

    private static long lastCommittedOffset(MockProducer<String, byte[]> producer) {
        return lastCommitted(producer).offset();
    }

    private static OffsetAndMetadata lastCommitted(MockProducer<String, byte[]> producer) {
        List<Map<String, Map<TopicPartition, OffsetAndMetadata>>> history = producer.consumerGroupOffsetsHistory();
        return history.get(history.size() - 1).get(CONFIG.groupId()).get(P0);
    }

    /** A step record as the loop writes it: a complete step without tool calls. */
    private static TurnRequestRecord step(String turnId, int step) {
        return request(turnId).stepDone(step, TurnProgress.checkpoint("m", null, null, new StepOutcome(
                ResponseStatus.COMPLETE, "stop", null, List.of(), Json.MAPPER.createArrayNode(), null, false, false,
                null, 1), false, null));
    }

    private static String header(ProducerRecord<String, byte[]> record, String name) {
        return new String(record.headers().lastHeader(name).value(), StandardCharsets.UTF_8);
    }

    private static ToolCallRequest call(String callId) {
        return new ToolCallRequest("run-turn-a-s1-" + callId, callId, "write_file", "{}");
    }

    private static TurnRequestRecord request(String turnId) {
        return TurnRequestRecord.request(turnId, "thread-1", "run-" + turnId, null, 1_000,
                Json.MAPPER.createObjectNode().put("prompt", "hi"));
    }

    /** One partition of {@code llm.turn-requests} as the group consumer shows it. */
    private static final class Log implements OwnedPartitions.GroupLog {
        final List<ConsumerRecord<String, byte[]>> records = new ArrayList<>();
        final Set<TopicPartition> paused = new HashSet<>();
        final List<TopicPartition> rewound = new ArrayList<>();
        /** P0's position; the other partitions' in {@link #otherPositions}. */
        long position;
        final Map<TopicPartition, Long> otherPositions = new HashMap<>();
        /** The partitions of each read to the end, and what runs as one starts. */
        final List<Set<TopicPartition>> reads = new ArrayList<>();
        Runnable onRead = () -> { };
        long committed;
        String committedMetadata = "";
        int failingReads;
        /** Partitions whose end the next read cannot find: it reads the others. */
        final Set<TopicPartition> endUnknown = new HashSet<>();
        /** The turn ids of each takeover's reads of its turns, and what runs when a turn's records are read. */
        final List<List<String>> resumedTogether = new ArrayList<>();
        Runnable onTurnRead = () -> { };
        /** Runs when the handover reads the position to commit: a turn can end just then. */
        Runnable whenPositionRead = () -> { };

        ConsumerRecord<String, byte[]> record(long offset, TurnRequestRecord value) {
            return record(P0, offset, value);
        }

        ConsumerRecord<String, byte[]> record(TopicPartition partition, long offset, TurnRequestRecord value) {
            return new ConsumerRecord<>(partition.topic(), partition.partition(), offset, value.threadId(),
                    Json.toBytes(value));
        }

        void append(long offset, TurnRequestRecord value) {
            records.add(record(offset, value));
        }

        @Override
        public long position(TopicPartition partition) {
            whenPositionRead.run();
            return partition.equals(P0) ? position : otherPositions.getOrDefault(partition, 0L);
        }

        @Override
        public ConsumerGroupMetadata groupMetadata() {
            return new ConsumerGroupMetadata(CONFIG.groupId());
        }

        @Override
        public void seek(TopicPartition partition, long offset) {
            if (partition.equals(P0)) {
                position = offset;
            } else {
                otherPositions.put(partition, offset);
            }
        }

        @Override
        public Map<TopicPartition, String> committedMetadata(Set<TopicPartition> partitions) {
            Map<TopicPartition, String> metadata = new HashMap<>();
            partitions.forEach(partition -> metadata.put(partition, committedMetadata));
            return metadata;
        }

        @Override
        public void rewind(TopicPartition partition) {
            rewound.add(partition);
            position = committed;
        }

        @Override
        public void pause(TopicPartition partition) {
            paused.add(partition);
        }

        @Override
        public void resume(TopicPartition partition) {
            paused.remove(partition);
        }

        @Override
        public TurnResumer.PartitionsRead readToEnd(Map<TopicPartition, Long> from) {
            onRead.run();
            reads.add(Set.copyOf(from.keySet()));
            if (failingReads > 0) {
                failingReads--;
                throw new TimeoutException("the read did not reach the high watermark");
            }
            Map<TopicPartition, List<ConsumerRecord<String, byte[]>>> read = new HashMap<>();
            Map<TopicPartition, KafkaException> unreadable = new HashMap<>();
            from.forEach((partition, offset) -> {
                if (endUnknown.remove(partition)) {
                    unreadable.put(partition, new KafkaException("cannot read the end of " + partition,
                            new NotLeaderOrFollowerException("its leader moves")));
                } else {
                    read.put(partition, records.stream().filter(record -> record.partition() == partition.partition()
                            && record.offset() >= offset).toList());
                }
            });
            return new TurnResumer.PartitionsRead(read, unreadable);
        }

        @Override
        public TurnResumer.TurnLog turnsOf(List<TurnRequestRecord> resumed) {
            resumedTogether.add(resumed.stream().map(TurnRequestRecord::turnId).toList());
            return new TurnResumer.TurnLog() {
                @Override
                public List<StreamPayload> rawEvents(String runId, Instant since) {
                    onTurnRead.run();
                    return List.of();
                }

                @Override
                public List<ToolResult> toolResults(String turnId, Instant since) {
                    return List.of();
                }

                @Override
                public List<ControlMessage> commands(String turnId, Instant since) {
                    return List.of();
                }
            };
        }
    }

    /** Each partition's producer, opened anew at every takeover; the first few fail to initialise. */
    private static final class Producers implements OwnedPartitions.Producers {
        final List<MockProducer<String, byte[]>> opened = new ArrayList<>();
        /** The last producer opened for each partition. */
        final Map<TopicPartition, MockProducer<String, byte[]>> byPartition = new HashMap<>();
        int failingInits;

        /** Partitions whose producers cannot initialise (InitProducerId times out), for as many inits as given. */
        final Map<TopicPartition, Integer> failingInitsOf = new HashMap<>();
        /** Runs in each producer's {@code initTransactions}, on the fencing thread. */
        Runnable onInit = () -> { };

        /** Called from the fencing threads, one per partition. */
        @Override
        public synchronized OwnedPartition.TransactionalProducer open(TopicPartition partition) {
            MockProducer<String, byte[]> producer = new MockProducer<>(true, null, new StringSerializer(),
                    new ByteArraySerializer()) {
                @Override
                public void initTransactions() {
                    onInit.run();
                    super.initTransactions();
                }
            };
            int failingHere = failingInitsOf.getOrDefault(partition, 0);
            if (failingInits > 0 || failingHere > 0) {
                failingInits = Math.max(0, failingInits - 1);
                failingInitsOf.put(partition, Math.max(0, failingHere - 1));
                producer.initTransactionException = new TimeoutException(
                        "Timeout expired after 60000ms while awaiting InitProducerId");
            }
            opened.add(producer);
            byPartition.put(partition, producer);
            return new OwnedPartition.TransactionalProducer(producer, () -> { });
        }
    }

    /** @param unresumable why the turn ends at once with an error, or null for a turn that runs */
    private record Run(String turnId, long offset, boolean resume, int steps, String unresumable) {
    }

    /** Turns as the runner registers them; they end when the test says, or stop when handed over. */
    private static final class Turns implements PartitionOwnership.Turns {
        final TurnRegistry registry = new TurnRegistry();
        final List<Run> runs = new ArrayList<>();
        final Map<String, Runnable> enders = new HashMap<>();
        boolean stopWhenHandedOver;

        @Override
        public void run(TurnRequestRecord request, TraceContext trace, List<TurnRequestRecord> steps, boolean resume,
                        TurnPartition partition, long offset) {
            runs.add(new Run(request.turnId(), offset, resume, steps.size(), null));
            TurnRegistry.ActiveTurn active = registry.register(new TurnStatus(request.turnId(), request.threadId(),
                    request.runId(), TurnPhase.RUNNING));
            partition.started(offset, active);
            enders.put(request.turnId(), () -> {
                registry.finish(request.turnId(), TurnPhase.COMPLETE);
                partition.stopped(offset, request.turnId(), false);
            });
            active.handover.thenRun(() -> {
                if (stopWhenHandedOver) {
                    registry.release(request.turnId());
                    partition.stopped(offset, request.turnId(), true);
                }
            });
        }

        @Override
        public void endUnresumable(TurnRequestRecord request, TraceContext trace, List<TurnRequestRecord> steps,
                                   TurnPartition partition, long offset, String why) {
            runs.add(new Run(request.turnId(), offset, true, steps.size(), why));
        }

        TurnRegistry.ActiveTurn active(String turnId) {
            return registry.running().stream().filter(turn -> turn.status.turnId().equals(turnId)).findFirst()
                    .orElseThrow();
        }

        void end(String turnId) {
            enders.remove(turnId).run();
        }
    }
}
