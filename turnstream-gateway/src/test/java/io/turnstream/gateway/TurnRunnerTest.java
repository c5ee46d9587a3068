package io.turnstream.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.gateway.api.IdempotentStart;
import io.turnstream.gateway.loop.ApprovalDecisions;
import io.turnstream.gateway.loop.GatewayMetrics;
import io.turnstream.gateway.loop.ThreadAllowances;
import io.turnstream.gateway.loop.TurnProgress;
import io.turnstream.gateway.loop.TurnPublisher;
import io.turnstream.gateway.loop.TurnRegistry;
import io.turnstream.gateway.ownership.TurnHistory;
import io.turnstream.gateway.ownership.TurnPartition;
import io.turnstream.gateway.provider.ErrorCodes;
import io.turnstream.gateway.provider.FinishReasons;
import io.turnstream.gateway.provider.ModelCaller;
import io.turnstream.gateway.provider.StepItems;
import io.turnstream.gateway.provider.StepOutcome;
import io.turnstream.gateway.thread.BusyThreadPolicy;
import io.turnstream.gateway.thread.ThreadRebuild;
import io.turnstream.gateway.turn.TurnPhase;
import io.turnstream.gateway.turn.TurnRequest;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.model.ControlMessage;
import io.turnstream.model.ErrorInfo;
import io.turnstream.model.Json;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.runtime.Settings;
import io.turnstream.runtime.TraceContext;
import io.turnstream.schema.SchemaRegistryException;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link TurnRunner} without a broker or a provider: however a turn ends here (complete, error, cancelled,
 * unable to run, already ended, handed over, its resume failing, or the runner shutting down) its registry
 * slot is released and its partition told whether the request must be read again; the tenant permit it holds
 * here is released unless the turn goes on at another gateway. The turns run on the runner's threads;
 * {@link TurnRunner#close()} returns once they have ended, so nothing here waits for a time.
 */
class TurnRunnerTest {

    private static final Clock CLOCK = Clock.fixed(Instant.ofEpochMilli(1_000_000), ZoneOffset.UTC);
    private static final long OFFSET = 7;

    private final GatewayConfig config = GatewayConfig.from(Settings.of(new Properties()));
    private final Providers providers = new Providers(ProviderEndpoints.simulatedOnly("http://127.0.0.1:9"), config);
    private final TurnRegistry registry = new TurnRegistry();
    private final List<String> permitsReleased = new CopyOnWriteArrayList<>();
    private final Partition partition = new Partition();
    private ModelCaller model = TurnRunnerTest::answers;
    /** The turn that took the Idempotency-Key of a keyed request, when another did. */
    private Function<String, Optional<String>> keyTakenBy = turnId -> Optional.empty();
    private TurnHistory history = (request, steps, requestedModel, active) -> TurnProgress.fresh(requestedModel);
    private ThreadRebuild threadHistory = (record, request, offset, before) -> request;
    private BusyThreadPolicy busyPolicy = BusyThreadPolicy.REJECT;
    /** What the runner published on {@code llm.control}, and whether the turn it names was cancelled here then. */
    private final List<ControlMessage> published = new CopyOnWriteArrayList<>();
    private final List<Boolean> cancelledHereWhenPublished = new CopyOnWriteArrayList<>();

    @AfterEach
    void closeProviders() {
        providers.close();
    }

    @Test
    void aTurnThatCompletesReleasesItsSlotAndPermitAndItsRequest() {
        String turnId = runAndWait(request("hi"), false);

        assertThat(partition.lastEvent()).isInstanceOfSatisfying(StreamPayload.ResponseDone.class,
                done -> assertThat(done.status()).isEqualTo(ResponseStatus.COMPLETE));
        assertReleasedAndFinished(turnId, TurnPhase.COMPLETE);
    }

    @Test
    void aTurnWhoseModelCallFailsReleasesEverything() {
        model = (adapter, endpoint, request, items, cancel) -> StepOutcome.refused(
                ErrorInfo.of("invalid_request_error", "no such model"), false, false, null, 0);

        String turnId = runAndWait(request("hi"), false);

        assertThat(partition.lastEvent()).isInstanceOf(StreamPayload.ResponseError.class);
        assertReleasedAndFinished(turnId, TurnPhase.ERROR);
    }

    @Test
    void aTurnCancelledBeforeItStartedHereReleasesEverything() {
        TurnRequestRecord record = request("hi");
        // the cancel reached this gateway before the request did: it is applied when the turn starts
        registry.cancel(record.turnId(), "the user stopped it");
        model = (adapter, endpoint, request, items, cancel) -> cancel.isCancelled() ? StepOutcome.abortedBeforeStream()
                : answers(adapter, endpoint, request, items, cancel);

        String turnId = runAndWait(record, false);

        assertThat(partition.lastEvent()).isInstanceOfSatisfying(StreamPayload.ResponseDone.class,
                done -> assertThat(done.status()).isEqualTo(ResponseStatus.ABORTED));
        assertReleasedAndFinished(turnId, TurnPhase.ABORTED);
    }

    /**
     * Under {@code interrupt} the running turn is cancelled as a user's cancel is, on {@code llm.control}, before it
     * stops here: a refused commit or a handover that drops its {@code aborted} end leaves the cancel for the next
     * owner's takeover to read, instead of the interrupted turn running to its end there.
     */
    @Test
    void anInterruptIsPublishedOnTheControlTopicBeforeTheRunningTurnStops() {
        busyPolicy = BusyThreadPolicy.INTERRUPT;
        TurnRequestRecord running = request("take your time");
        TurnRequestRecord interrupting = TurnRequestRecord.request("turn-2", "thread-1", "run-2", "tenant-a", 2,
                new TurnRequest("simulated", null, null, null, List.of(), "stop, do this", List.of(), null, null)
                        .toJson());
        model = (adapter, endpoint, request, items, cancel) -> {
            if (request.conversation().toString().contains("take your time")) {
                // the running turn streams until it is cancelled
                cancel.future().join();
                return StepOutcome.abortedBeforeStream();
            }
            return answers(adapter, endpoint, request, items, cancel);
        };
        TurnRunner runner = runner();

        runner.run(running, TraceContext.fresh(), List.of(), false, partition, OFFSET);
        runner.run(interrupting, TraceContext.fresh(), List.of(), false, partition, OFFSET + 1);
        runner.close();

        assertThat(published).containsExactly(ControlMessage.cancel("turn-1", BusyThreadPolicy.INTERRUPTED));
        assertThat(cancelledHereWhenPublished).as("published before the turn stops here").containsExactly(false);
        assertThat(registry.status("turn-1")).map(TurnStatus::status).contains(TurnPhase.ABORTED);
        assertThat(registry.status("turn-2")).map(TurnStatus::status).contains(TurnPhase.COMPLETE);
    }

    @Test
    void aTurnThatCannotRunEndsWithTurnCannotRunAndReleasesEverything() {
        // the request names a provider this gateway has no endpoint for
        TurnRequestRecord record = TurnRequestRecord.request("turn-1", "thread-1", "run-1", "tenant-a", 1,
                TurnRequest.prompt("anthropic", "claude-sonnet-4-5", "hi").toJson());

        String turnId = runAndWait(record, false);

        assertThat(partition.events).first().isInstanceOf(StreamPayload.ResponseStart.class);
        assertThat(partition.lastEvent()).isInstanceOfSatisfying(StreamPayload.ResponseError.class,
                error -> assertThat(error.error().code()).isEqualTo(ErrorCodes.TURN_CANNOT_RUN));
        assertReleasedAndFinished(turnId, TurnPhase.ERROR);
    }

    @Test
    void aTurnTakenOverThatCannotRunHereEndsWithWhatItsCheckpointedStepsUsed() {
        TurnRequestRecord record = TurnRequestRecord.request("turn-1", "thread-1", "run-1", "tenant-a", 1,
                TurnRequest.prompt("anthropic", "claude-sonnet-4-5", "hi").toJson());
        StreamPayload.Usage used = new StreamPayload.Usage(10, 5, 15, null, null, null, 0.01);
        StreamPayload.Usage failed = new StreamPayload.Usage(7, 0, 7, null, null, null, 0.002);
        StepOutcome step = new StepOutcome(ResponseStatus.COMPLETE, FinishReasons.LENGTH, used, List.of(),
                Json.MAPPER.createArrayNode(), null, false, false, null, 1);
        // an earlier owner completed step 1 (after a failed call) and was continuing it
        history = (request, steps, requestedModel, active) -> TurnProgress.of(request.runId(), requestedModel,
                List.of(request.stepDone(1, TurnProgress.checkpoint(requestedModel, used, failed, step, true, null))),
                List.of(new StreamPayload.ResponseStart(request.runId(), request.turnId(), request.threadId(), null,
                        requestedModel, "anthropic", 1L)));

        String turnId = runAndWait(record, true);

        assertThat(partition.events).singleElement().isInstanceOfSatisfying(StreamPayload.ResponseError.class, error -> {
            assertThat(error.error().code()).isEqualTo(ErrorCodes.TURN_CANNOT_RUN);
            assertThat(error.usage()).isEqualTo(used);
            assertThat(error.failedAttemptsUsage()).isEqualTo(failed);
        });
        assertReleasedAndFinished(turnId, TurnPhase.ERROR);
    }

    /** Another request under the same key came first in the partition: this one ends unrun, whatever its prompt. */
    @Test
    void aKeyedTurnWhoseKeyAnotherRequestTookEndsUnrun() {
        keyTakenBy = turnId -> Optional.of("turn-first");
        model = (adapter, endpoint, request, items, cancel) -> {
            throw new AssertionError("the model is not called");
        };
        TurnRequestRecord record = TurnRequestRecord.request("turn-2", "thread-1", "run-2", "tenant-a", 1,
                TurnRequest.prompt("simulated", null, "hi").toJson().put(IdempotentStart.MARKER, true));

        String turnId = runAndWait(record, false);

        assertThat(partition.lastEvent()).isInstanceOfSatisfying(StreamPayload.ResponseError.class, error -> {
            assertThat(error.error().code()).isEqualTo(ErrorCodes.IDEMPOTENCY_KEY_REUSED);
            assertThat(error.error().message()).contains("turn-first");
        });
        assertReleasedAndFinished(turnId, TurnPhase.ERROR);
    }

    @Test
    void aTurnUnderNoKeyRunsWhateverTheKeysSay() {
        keyTakenBy = turnId -> Optional.of("turn-first");

        String turnId = runAndWait(request("hi"), false);

        assertReleasedAndFinished(turnId, TurnPhase.COMPLETE);
    }

    @Test
    void anUnreadableRequestEndsItsTurnTooInsteadOfHoldingItsPermit() {
        TurnRequestRecord record = TurnRequestRecord.request("turn-1", "thread-1", "run-1", "tenant-a", 1,
                Json.MAPPER.createObjectNode().put("system", " "));

        String turnId = runAndWait(record, false);

        assertThat(partition.lastEvent()).isInstanceOfSatisfying(StreamPayload.ResponseError.class,
                error -> assertThat(error.error().code()).isEqualTo(ErrorCodes.TURN_CANNOT_RUN));
        assertReleasedAndFinished(turnId, TurnPhase.ERROR);
    }

    /**
     * A raw event of the turn cannot be read (its end, maybe): resumed, the turn would run again, at every takeover.
     * It ends with {@code turn_error} instead, once: the next takeover reads that end.
     */
    @Test
    void aResumedTurnWithARawEventThatCannotBeReadEndsWithTurnCannotRunWithoutCallingTheModel() {
        history = (request, steps, requestedModel, active) -> {
            throw new TurnHistory.UnreadableRecords(TurnProgress.of(request.runId(), requestedModel, steps,
                    List.of(new StreamPayload.ResponseStart(request.runId(), request.turnId(), request.threadId(), null,
                            requestedModel, "simulated", 1L))), "its raw event at llm.raw-events-0@9 (bad) cannot be read");
        };
        model = (adapter, endpoint, request, items, cancel) -> {
            throw new AssertionError("the model is not called");
        };

        String turnId = runAndWait(request("hi"), true);

        assertThat(partition.events).as("started before: only its end").singleElement()
                .isInstanceOfSatisfying(StreamPayload.ResponseError.class, error -> assertThat(error.error())
                        .isEqualTo(ErrorInfo.of(ErrorCodes.TURN_CANNOT_RUN, "the turn cannot be resumed: its raw "
                                + "event at llm.raw-events-0@9 (bad) cannot be read")));
        assertReleasedAndFinished(turnId, TurnPhase.ERROR);
    }

    @Test
    void aResumedTurnWithAStepRecordThatCannotBeUsedEndsWithTurnCannotRunWithoutCallingTheModel() {
        history = (request, steps, requestedModel, active) -> TurnProgress.of(request.runId(), requestedModel, steps,
                List.of(new StreamPayload.ResponseStart(request.runId(), request.turnId(), request.threadId(), null,
                        requestedModel, "simulated", 1L)));
        model = (adapter, endpoint, request, items, cancel) -> {
            throw new AssertionError("the model is not called");
        };
        TurnRequestRecord record = request("hi");
        TurnRunner runner = runner();

        runner.endUnresumable(record, TraceContext.fresh(), List.of(), partition, OFFSET, "its record at p@6 cannot be used");
        runner.close();

        assertThat(partition.events).singleElement().isInstanceOfSatisfying(StreamPayload.ResponseError.class,
                error -> assertThat(error.error()).isEqualTo(ErrorInfo.of(ErrorCodes.TURN_CANNOT_RUN,
                        "the turn cannot be resumed: its record at p@6 cannot be used")));
        assertReleasedAndFinished(record.turnId(), TurnPhase.ERROR);
    }

    @Test
    void aResumedTurnThatHadAlreadyEndedPublishesNothingAndReleasesEverything() {
        history = (request, steps, requestedModel, active) -> TurnProgress.of(request.runId(), requestedModel, steps,
                List.of(new StreamPayload.ResponseStart(request.runId(), request.turnId(), request.threadId(), null,
                                requestedModel, "simulated", 1L),
                        new StreamPayload.ResponseDone(request.runId(), ResponseStatus.COMPLETE, null, "stop")));

        String turnId = runAndWait(request("hi"), true);

        assertThat(partition.events).isEmpty();
        assertReleasedAndFinished(turnId, TurnPhase.COMPLETE);
    }

    @Test
    void aTurnHandedOverAtItsStepBoundaryKeepsItsRequestAndPermitForTheNextOwner() {
        model = (adapter, endpoint, request, items, cancel) -> {
            // the partition is revoked while the step streams; the step stops at the output token limit, so the
            // turn would go on: it stops at the step boundary instead
            registry.running().forEach(turn -> turn.handover.complete(null));
            StepOutcome outcome = answers(adapter, endpoint, request, items, cancel);
            return new StepOutcome(ResponseStatus.COMPLETE, FinishReasons.LENGTH, outcome.usage(), List.of(),
                    outcome.assistantContent(), null, false, false, null, outcome.itemsPublished());
        };

        String turnId = runAndWait(request("hi"), false);

        assertHandedOver(turnId);
        assertThat(partition.checkpoints).containsExactly(1);
        assertThat(partition.events).noneMatch(event -> event instanceof StreamPayload.ResponseDone
                || event instanceof StreamPayload.ResponseError);
    }

    @Test
    void aTurnWhoseResumeFailsIsLeftToTheNextOwnerWithoutLeakingItsSlot() {
        history = (request, steps, requestedModel, active) -> {
            throw new IllegalStateException("llm.raw-events cannot be read");
        };

        String turnId = runAndWait(request("hi"), true);

        assertHandedOver(turnId);
        assertThat(partition.events).isEmpty();
    }

    /**
     * What Kafka holds of a resumed turn cannot be read for now (the schema registry cannot be reached): the turn does
     * not end with {@code TURN_CANNOT_RUN}; it is handed over and its partition told to be taken over again after a
     * backoff, which resumes it.
     */
    @Test
    void aResumedTurnWhoseHistoryCannotBeReadForNowIsHandedOverAndItsPartitionTakenOverAgain() {
        history = (request, steps, requestedModel, active) -> {
            throw new SchemaRegistryException("schema registry cannot be reached", -1, null);
        };
        model = (adapter, endpoint, request, items, cancel) -> {
            throw new AssertionError("the model is not called");
        };

        String turnId = runAndWait(request("hi"), true);

        assertHandedOver(turnId);
        assertThat(partition.events).as("no turn_error").isEmpty();
        assertThat(partition.cannotRunNow).containsExactly(turnId);
    }

    /**
     * The thread's earlier turns cannot be read for now (the schema registry cannot be reached): the new turn neither
     * runs without them nor ends with {@code TURN_CANNOT_RUN}; it is handed over and its partition taken over again.
     */
    @Test
    void aTurnWhoseThreadCannotBeReadForNowIsHandedOverAndItsPartitionTakenOverAgain() {
        threadHistory = (record, request, offset, before) -> {
            throw new SchemaRegistryException("schema registry cannot be reached", -1, null);
        };
        model = (adapter, endpoint, request, items, cancel) -> {
            throw new AssertionError("the model is not called");
        };

        String turnId = runAndWait(request("hi"), false);

        assertHandedOver(turnId);
        assertThat(partition.events).as("no turn_error").isEmpty();
        assertThat(partition.cannotRunNow).containsExactly(turnId);
    }

    /**
     * Whether a keyed turn took its key cannot be read for now (the index waits for the schema registry): the turn
     * neither runs as if it had nor ends unrun; it is handed over and its partition taken over again.
     */
    @Test
    void aKeyedTurnWhoseKeyCannotBeCheckedForNowIsHandedOverAndItsPartitionTakenOverAgain() {
        keyTakenBy = turnId -> {
            throw new SchemaRegistryException("schema registry cannot be reached", -1, null);
        };
        model = (adapter, endpoint, request, items, cancel) -> {
            throw new AssertionError("the model is not called");
        };
        TurnRequestRecord record = TurnRequestRecord.request("turn-2", "thread-1", "run-2", "tenant-a", 1,
                TurnRequest.prompt("simulated", null, "hi").toJson().put(IdempotentStart.MARKER, true));

        String turnId = runAndWait(record, false);

        assertHandedOver(turnId);
        assertThat(partition.events).as("no turn_error").isEmpty();
        assertThat(partition.cannotRunNow).containsExactly(turnId);
    }

    @Test
    void aTurnThatArrivesWhileTheRunnerShutsDownIsHandedOver() {
        TurnRunner runner = runner();
        runner.close();
        TurnRequestRecord record = request("hi");

        runner.run(record, TraceContext.fresh(), List.of(), false, partition, OFFSET);

        assertHandedOver(record.turnId());
    }

    private String runAndWait(TurnRequestRecord record, boolean resume) {
        TurnRunner runner = runner();
        runner.run(record, TraceContext.fresh(), List.of(), resume, partition, OFFSET);
        runner.close();
        return record.turnId();
    }

    private TurnRunner runner() {
        return new TurnRunner(config, providers, List::of, registry, new ApprovalDecisions(), new ThreadAllowances(), model,
                new GatewayMetrics(), permitsReleased::add, threadHistory,
                busyPolicy, turnId -> false, keyTakenBy, message -> {
                    cancelledHereWhenPublished.add(registry.running().stream().anyMatch(turn ->
                            turn.status.turnId().equals(message.turnId()) && turn.cancel.isCancelled()));
                    published.add(message);
                    return CompletableFuture.completedFuture(null);
                });
    }

    private void assertReleasedAndFinished(String turnId, TurnPhase phase) {
        assertThat(registry.runningCount()).as("the registry slot").isZero();
        assertThat(registry.status(turnId)).map(TurnStatus::status).contains(phase);
        assertThat(permitsReleased).as("the tenant permit").containsExactly(turnId);
        assertThat(partition.stops).as("the partition reads the request no more").containsExactly(new Stop(OFFSET, false));
    }

    private void assertHandedOver(String turnId) {
        assertThat(registry.runningCount()).as("the registry slot").isZero();
        assertThat(registry.status(turnId)).as("no final status here").isEmpty();
        assertThat(permitsReleased).as("the permit is held until the turn ends elsewhere").isEmpty();
        assertThat(partition.stops).as("the next owner reads the request again").containsExactly(new Stop(OFFSET, true));
    }

    private static TurnRequestRecord request(String prompt) {
        TurnRequest request = new TurnRequest("simulated", null, null, null, List.of(), prompt, List.of(), null, null);
        return TurnRequestRecord.request("turn-1", "thread-1", "run-1", "tenant-a", 1, request.toJson());
    }

    /** The model answers one short message. */
    private static StepOutcome answers(io.turnstream.gateway.provider.ProviderAdapter adapter,
                                       io.turnstream.gateway.provider.ProviderEndpoint endpoint,
                                       io.turnstream.gateway.provider.ModelRequest request, StepItems items,
                                       io.turnstream.gateway.provider.CancelSignal cancel) {
        StepItems.Item message = items.startMessage("Hello");
        message.done(null);
        return new StepOutcome(ResponseStatus.COMPLETE, FinishReasons.STOP, new StreamPayload.Usage(10, 2, 12),
                List.of(), Json.MAPPER.createArrayNode().add(Json.MAPPER.createObjectNode().put("type", "text")
                        .put("text", "Hello")), null, false, false, null, items.published());
    }

    private record Stop(long offset, boolean handedOver) {
    }

    /** The owned partition, in memory: what its turns write, and what they tell it; its takeover's reads are {@link #history}. */
    private final class Partition implements TurnPartition {
        final List<StreamPayload> events = new CopyOnWriteArrayList<>();
        final List<Integer> checkpoints = new CopyOnWriteArrayList<>();
        final List<Long> started = new CopyOnWriteArrayList<>();
        final List<Stop> stops = new CopyOnWriteArrayList<>();
        final List<String> cannotRunNow = new CopyOnWriteArrayList<>();

        @Override
        public TurnHistory history() {
            return history;
        }

        @Override
        public TurnPublisher publisherFor(TurnRequestRecord request, TraceContext trace) {
            return new TurnPublisher() {
                @Override
                public CompletableFuture<Void> rawEvent(String runId, TraceContext trace, StreamPayload payload) {
                    events.add(payload);
                    return CompletableFuture.completedFuture(null);
                }

                @Override
                public CompletableFuture<Void> stepDone(int step, JsonNode checkpoint) {
                    checkpoints.add(step);
                    return CompletableFuture.completedFuture(null);
                }

                @Override
                public void failTransaction(Throwable why) {
                    throw new AssertionError("every end is written here", why);
                }

                @Override
                public CompletableFuture<Void> control(ControlMessage message) {
                    throw new AssertionError("no tool is allowed for the thread here: " + message);
                }

                @Override
                public Clock clock() {
                    return CLOCK;
                }
            };
        }

        @Override
        public void started(long offset, TurnRegistry.ActiveTurn turn) {
            started.add(offset);
        }

        @Override
        public void stopped(long offset, String turnId, boolean handedOver) {
            stops.add(new Stop(offset, handedOver));
        }

        @Override
        public void cannotRunNow(String turnId, RuntimeException why) {
            cannotRunNow.add(turnId);
        }

        StreamPayload lastEvent() {
            return new ArrayList<>(events).get(events.size() - 1);
        }
    }
}
