package io.turnstream.gateway.loop;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.gateway.ItemInvariants;
import io.turnstream.gateway.ownership.OwnedPartition;
import io.turnstream.gateway.ownership.TurnResumer;
import io.turnstream.gateway.provider.CancelSignal;
import io.turnstream.gateway.provider.Conversation;
import io.turnstream.gateway.provider.ErrorCodes;
import io.turnstream.gateway.provider.FinishReasons;
import io.turnstream.gateway.provider.ModelCaller;
import io.turnstream.gateway.provider.ModelRequest;
import io.turnstream.gateway.provider.ProviderAdapter;
import io.turnstream.gateway.provider.ProviderEndpoint;
import io.turnstream.gateway.provider.ResolvedProvider;
import io.turnstream.gateway.provider.RetryPolicy;
import io.turnstream.gateway.provider.StepItems;
import io.turnstream.gateway.provider.StepOutcome;
import io.turnstream.gateway.provider.ToolDefinition;
import io.turnstream.gateway.turn.TurnPhase;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.model.ControlMessage;
import io.turnstream.model.ErrorInfo;
import io.turnstream.model.ItemType;
import io.turnstream.model.Json;
import io.turnstream.model.Origins;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.StreamPayload.Usage;
import io.turnstream.model.ToolResult;
import io.turnstream.model.ToolState;
import io.turnstream.model.TurnActivity;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.runtime.Settings;
import io.turnstream.runtime.TraceContext;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.random.RandomGenerator;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.config.Configurator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Deterministic simulation of whole turns: the real {@link AgentLoop} (its {@link LoopMachine}, with
 * {@link StepAttempts}, {@link ToolRound}, {@code StepItems} and {@link TurnProgress}) runs against a
 * simulated provider, tool executor, clock and Kafka log, under a fault schedule drawn from a seed:
 * HTTP 429 with and without retry-after, 529, 500, a prompt too long, a stream broken or stalled at any
 * event (before output, mid-text, after a whole tool block), an in-stream overload, {@code max_tokens},
 * a fallback model or none, compaction (its summarisation call refused, broken, empty or cancelled), tool
 * results late, missing (timeout), failed or denied, approvals asked and decided late, twice, contradictorily,
 * never (the executor's timeout denial) or denied (with {@code on-deny} {@code stop} and {@code continue}),
 * a client-side tool offered (its calls returned to the caller), a cancel at any moment, the owner crashing
 * before any of its writes, a write that fails (its transaction cannot commit), the gateway failing inside (a
 * model call, a streamed event or a wait throws, or the send of the turn's end), and rebalance and drain (the partition revoked mid-turn or
 * before the turn ran: the turn is handed over at its next step boundary, or cut off where it is
 * when the handover deadline passes), and commits that fail (a transaction the coordinator aborted; at any commit, the
 * one holding the turn's end after a cancel included) or, as {@code OwnedPartition.commit} refuses them, because they
 * hold a call the turn released before it was cancelled. The log commits at random points as the ownership loop's
 * commit interval does, a crash, cut-off or refused commit aborts what was not committed, and a new owner resumes
 * from what was committed with {@link io.turnstream.gateway.ownership.TurnResumer}'s logic, as on a takeover: the
 * same gateway (its registry kept) after a refused commit, or another one, started before the cancel (its inbox
 * heard it) or after it (only {@code llm.control}'s log tells it); approval rounds know pending asks from the
 * compacted source. Every schedule checks the invariants (see docs/gateway.md);
 * a failure names its seed, and {@code -Dsimulation.seed=<seed> -Dsimulation.schedules=1} replays it.
 */
class TurnSimulationTest {

    private static final int SCHEDULES = Integer.getInteger("simulation.schedules", 10_000);
    private static final String RUN = "run";
    private static final String MODEL = "sim-large";
    private static final String FALLBACK = "sim-small";
    private static final Duration STALL = Duration.ofSeconds(30);
    private static final Duration TOOL_TIMEOUT = Duration.ofSeconds(60);
    /** The tool executor denies a call no one decided on within this (as its approval-timeout-ms). */
    private static final Duration APPROVAL_TIMEOUT = Duration.ofSeconds(45);
    private static final Duration REBALANCE_HANDOVER = Duration.ofSeconds(5);
    private static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(30);
    private static final String TURN = "turn";
    private static final String CANCELLED = "the user stopped the turn";
    /** How the executor's denials start (the contract's {@code Not executed: the call was denied[: reason]}). */
    private static final String DENIAL = "Not executed: the call was denied";
    private static final List<ToolDefinition> TOOLS = List.of(
            new ToolDefinition("read_file", "reads", Json.MAPPER.createObjectNode(), true),
            new ToolDefinition("write_file", "writes", Json.MAPPER.createObjectNode()));
    /** A tool the caller runs itself (a client-side tool): offered to some turns; the caller answers its calls. */
    private static final ToolDefinition CLIENT_TOOL = new ToolDefinition("ask_user", "asks the user",
            Json.MAPPER.createObjectNode());
    private static final String QUIET = "io.turnstream.gateway.loop";
    /** The provider's refusals before any output that a retry may cure: a 529 and a 500. */
    private static final StepOutcome OVERLOADED = StepOutcome.refused(ErrorInfo.of("overloaded_error", "busy"), true,
            true, null, 0);
    private static final StepOutcome SERVER_ERROR = StepOutcome.refused(ErrorInfo.of("api_error", "oops"), true, false,
            null, 0);
    /** The one transition no schedule takes: a failure before the machine has started is a bug inside its start. */
    private static final LoopMachine.Transition FAILED_STARTING = new LoopMachine.Transition(LoopMachine.State.STARTING,
            LoopMachine.Why.GATEWAY_ERROR, LoopMachine.State.FAILED);
    private static Level previousLevel;

    /** What a schedule may draw, counted over the run. */
    enum Fault {
        HTTP_429_RETRY_AFTER, HTTP_429, HTTP_529, HTTP_500, PROMPT_TOO_LONG, BROKEN_BEFORE_OUTPUT, BROKEN_MID_STREAM,
        BROKEN_AFTER_TOOL_BLOCK, STALLED, OVERLOADED_IN_STREAM, MAX_TOKENS, TOOL_CALLS, FALLBACK_MODEL, TOOL_LATE,
        TOOL_NEVER_ANSWERS, TOOL_FAILS, TOOL_DENIED, COMPACTION, COMPACTION_FAILS, COMPACTION_CANCELLED,
        /** The summarising call refused as a step's call may be: each retried by the same policy. */
        COMPACTION_HTTP_429_RETRY_AFTER, COMPACTION_HTTP_429, COMPACTION_HTTP_529,
        APPROVAL_ASKED, APPROVAL_ALLOWED, APPROVAL_DENIED, APPROVAL_LATE, APPROVAL_DUPLICATED, APPROVAL_CONTRADICTORY,
        APPROVAL_NEVER, APPROVAL_REMEMBERED,
        /** An earlier turn of the thread allowed write_file for the rest of the thread. */
        THREAD_ALLOWS_WRITES, ON_DENY_STOP, ON_DENY_CONTINUE, CANCEL, CRASH, TAKEOVER, REBALANCE, DRAIN, HANDOVER_CUT_OFF,
        /** A transaction's commit that fails (the coordinator aborted it): what it held is aborted. */
        COMMIT_REFUSED,
        /** Not drawn apart: the refused commit held the turn's end, after the user's cancel. */
        COMMIT_REFUSED_AFTER_CANCEL,
        /** Not drawn: the transaction held a call the turn released before it was cancelled, so it did not commit. */
        RELEASE_OF_A_CANCELLED_TURN_REFUSED,
        /** After a refused commit the group gives the partition back to the same gateway (its registry kept). */
        SAME_GATEWAY_TAKES_OVER,
        /** The next owner started after the cancel was published: its inbox never saw it. */
        OWNER_STARTED_AFTER_CANCEL,
        /** Not drawn: a read-only call the executor started before its step's checkpoint was committed. */
        READ_ONLY_STARTED_WHILE_STREAMING,
        /** Not drawn: a call of a tool its thread allowed ({@code remember: true}) that the gateway approved itself. */
        ALLOWED_FOR_THE_THREAD,
        /** The turn offers a client-side tool, which the caller runs and answers with its next request. */
        CLIENT_TOOL_OFFERED,
        /** Not drawn apart: the model called the client-side tool. */
        CLIENT_TOOL_CALLED,
        /**
         * A write of the owner's transaction fails (its send's future fails, without a fence): the transaction
         * cannot commit, the later sends fail too, and the ownership loop's next commit takes the partition over
         * again from Kafka on the same gateway, as {@code OwnedPartitions.commitAll} does on a {@code KafkaException}.
         */
        WRITE_FAILED,
        /**
         * The gateway fails inside (a bug): a model or summarisation call throws, at its start or mid-stream, or a
         * wait does; the turn ends {@code INTERNAL}, as {@code AgentLoop.run} ends it.
         */
        GATEWAY_BUG,
        /**
         * The shell throws as it sends the turn's end (once; a bug, as {@link #GATEWAY_BUG}, and not after one): the
         * machine ended, and ends the turn again with {@code INTERNAL}, as {@code AgentLoop.run} has it do.
         */
        SHELL_FAILS_AT_THE_END,
        /**
         * The {@code INTERNAL} end the gateway sends after a bug throws too (once): the shell refuses the open
         * transaction ({@code TurnPublisher.failTransaction}) and hands the turn on; the commit is refused and the same
         * gateway takes the partition over again, as {@code OwnedPartitions.commitAll} does, and the turn goes on from
         * what was committed.
         */
        INTERNAL_END_FAILS,
        /** The partition is revoked after the turn was registered, before its thread ran it. */
        REVOKED_BEFORE_RUNNING
    }

    @BeforeAll
    static void quiet() {
        // 10,000 turns log their every retry and step, and a turn cut off by a handover its refused writes:
        // a failure shows as a broken invariant (an internal error is one), and a replay prints the errors
        previousLevel = LogManager.getLogger(QUIET).getLevel();
        Configurator.setLevel(QUIET, SCHEDULES == 1 ? Level.ERROR : Level.OFF);
    }

    @AfterAll
    static void loud() {
        Configurator.setLevel(QUIET, previousLevel);
    }

    @Test
    void everyScheduleKeepsTheInvariants() {
        long base = Long.getLong("simulation.seed", new Random().nextLong());
        Map<Fault, Integer> drawn = new EnumMap<>(Fault.class);
        Map<String, Integer> endings = new HashMap<>();
        Map<LoopMachine.Transition, Integer> transitions = new HashMap<>();
        long started = System.nanoTime();
        for (int i = 0; i < SCHEDULES; i++) {
            long seed = base + i;
            Schedule schedule = new Schedule(seed, drawn, transitions);
            try {
                endings.merge(schedule.run(), 1, Integer::sum);
            } catch (AssertionError | RuntimeException e) {
                if (SCHEDULES == 1) {
                    System.out.println(schedule.trace());
                }
                throw new AssertionError("schedule " + seed + " broke an invariant; replay it with -Dsimulation.seed="
                        + seed + " -Dsimulation.schedules=1: " + e.getMessage(), e);
            }
        }
        if (SCHEDULES >= 1_000) {
            assertThat(drawn).as("read-only calls start while the model streams").containsKey(
                    Fault.READ_ONLY_STARTED_WHILE_STREAMING);
        }
        if (SCHEDULES >= 5_000) {
            assertThat(drawn).as("a remembered approval lets the gateway approve a later call of the tool").containsKey(
                    Fault.ALLOWED_FOR_THE_THREAD);
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        System.out.printf("Turn simulation: %d schedules from seed %d in %.2f s (%.0f/s); turns ended %s; faults drawn: %s%n",
                SCHEDULES, base, seconds, SCHEDULES / seconds, endings, drawn);
        Set<LoopMachine.Transition> untaken = new HashSet<>(LoopMachine.TRANSITIONS);
        untaken.removeAll(transitions.keySet());
        System.out.printf("Loop transitions taken (%d of %d): %s; never taken: %s (%s is reached only by a bug inside "
                + "the machine's own start, which LoopMachineTest feeds it)%n", transitions.size(),
                LoopMachine.TRANSITIONS.size(), transitions, untaken, FAILED_STARTING);
    }

    /**
     * A seed is the whole schedule: run twice, it makes the same model calls and writes the same log, backoff
     * jitter included, so a failing seed replays exactly.
     */
    @Test
    void aScheduleReplaysExactlyFromItsSeed() {
        long base = new Random().nextLong();
        for (int i = 0; i < 300; i++) {
            Schedule first = new Schedule(base + i, new EnumMap<>(Fault.class), new HashMap<>());
            Schedule again = new Schedule(base + i, new EnumMap<>(Fault.class), new HashMap<>());
            assertThat(again.run()).isEqualTo(first.run());
            assertThat(again.trace()).as("schedule %d replayed", base + i).isEqualTo(first.trace());
        }
    }

    /** The owner's process dies: nothing after this runs, and what it did not commit is aborted. */
    static final class Crash extends Error {
        Crash() {
            super("simulated crash", null, false, false);
        }
    }

    /** A clock the simulation moves. */
    static final class SimClock extends Clock {
        long now = 1_000_000;

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public long millis() {
            return now;
        }

        /** Waits in which nothing happens by itself: one with nothing to read moves this clock to its deadline. */
        LoopWaits idleWaits() {
            return new LoopWaits() {
                @Override
                public <T> T next(BlockingQueue<T> inputs, long deadline) {
                    T next = inputs.poll();
                    if (next == null) {
                        now = Math.max(now, deadline);
                    }
                    return next;
                }
            };
        }

        @Override
        public Instant instant() {
            return Instant.ofEpochMilli(now);
        }
    }

    /**
     * One record of the simulated {@code llm.raw-events} / {@code llm.turn-requests} log, in write order.
     *
     * @param ownerCalls for a checkpoint: how many model calls its owner had made when it wrote it
     * @param at when it was written, by the simulated clock
     */
    record Entry(StreamPayload event, Integer step, JsonNode checkpoint, int owner, int ownerCalls, long at) {
    }

    /** One model call the simulated provider answered. */
    static final class ModelCall {
        final int step;
        /** What the call used: its prompt tokens, unique enough that double counting shows; 0 for a refused call. */
        Usage usage;
        final int owner;
        /** The step's last item, when the call completed without tool calls. */
        String lastItem;
        boolean complete;
        /** The call failed (its outcome is an error): what it used is reported apart. */
        boolean failed;

        ModelCall(int step, Usage usage, int owner) {
            this.step = step;
            this.usage = usage;
            this.owner = owner;
        }
    }

    /** One seeded schedule: a turn from request to its terminal event, through crashes, handovers and takeovers. */
    static final class Schedule {
        private final long seed;
        private final Random random;
        private final Map<Fault, Integer> drawn;
        private final Map<LoopMachine.Transition, Integer> transitions;
        private final SimClock clock = new SimClock();
        private final PriorityQueue<Timed> agenda = new PriorityQueue<>();
        private final List<Entry> log = new ArrayList<>();
        private int committed;
        private int atomicDepth;
        private int owner;
        private int writesUntilCrash = -1;
        /** The current owner's: what it runs, and the approval rounds it read on {@code llm.control}. */
        private TurnRegistry registry;
        private ApprovalDecisions approvals;
        private TurnRegistry.ActiveTurn active;
        private final List<ModelCall> calls = new ArrayList<>();
        /** Calls the executor received (their item_done was committed), and how often. */
        private final Map<String, Integer> received = new HashMap<>();
        /** Calls whose side effect happened: the executor ran them. */
        private final Set<String> ran = new HashSet<>();
        private final Map<String, ToolResult> results = new HashMap<>();
        private final Map<String, Long> startedAt = new HashMap<>();
        private final Set<String> toolNeverAnswers = new HashSet<>();
        /** Calls the executor asked a person about and holds until a decision. */
        private final Set<String> awaitingDecision = new HashSet<>();
        /** The tool of each call the executor received. */
        private final Map<String, String> toolOfCall = new HashMap<>();
        /** The thread's allowances ({@code llm.thread-allowances}): every gateway reads them, so they outlive owners. */
        private final ThreadAllowances allowances = new ThreadAllowances();
        /** The owner's approvals on {@code llm.control} not committed yet: the executor reads them once committed. */
        private final List<ControlMessage> uncommittedControls = new ArrayList<>();
        /** The decision the executor applied to each asked call: the first after its ask. */
        private final Map<String, Boolean> standing = new HashMap<>();
        private final boolean writesAskApproval;
        /** When the user's cancel is accepted: on {@code llm.control} from then on. */
        private long cancelAt = Long.MAX_VALUE;
        /** Releases the executor received from a commit made after the cancel was accepted. */
        private final List<String> releasedAfterCancel = new ArrayList<>();
        /** The registries (gateways) whose inbox handed them the cancel: an inbox reads each record once. */
        private final Set<TurnRegistry> heardCancel = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        /** When the owner's gateway started reading {@code llm.control}: it hears no cancel accepted before. */
        private long gatewayStartedAt;
        /** Commits still to fail (the coordinator aborted them), and whether the same gateway gets the partition back. */
        private int refusalsLeft;
        private boolean sameGatewayNext;
        /** When the owner's partition is revoked (rebalance, drain), and when its handover deadline passes. */
        private long handoverAt = Long.MAX_VALUE;
        private long cutOffAt = Long.MAX_VALUE;
        private Duration handoverWait;
        /** The owner's producer is fenced: its writes fail. */
        private boolean fenced;
        /** Writes until one fails (its transaction with it), or -1; whether the open transaction cannot commit. */
        private int writesUntilFailure;
        private boolean transactionFailed;
        /** Model calls, streamed events and waits until the gateway fails inside (once), or -1. */
        private int shellCallsUntilBug;
        /** The shell throws as it sends the turn's end, once, unless the gateway failed inside before. */
        private boolean failsAtTheEnd;
        private boolean bugged;
        /** The {@code INTERNAL} end sent after a bug throws too, once. */
        private boolean internalEndFails;
        private int timers;
        private int nextCallId;
        private final LoopConfig config;
        private final AgentLoop.Turn turn;

        Schedule(long seed, Map<Fault, Integer> drawn, Map<LoopMachine.Transition, Integer> transitions) {
            this.seed = seed;
            this.transitions = transitions;
            this.random = new Random(mixed(seed));
            this.drawn = drawn;
            Properties settings = new Properties();
            settings.setProperty("turnstream.gateway.context-window." + MODEL, "200000");
            settings.setProperty("turnstream.gateway.context-window." + FALLBACK, "200000");
            LoopConfig.OnDeny onDeny = random.nextBoolean() ? LoopConfig.OnDeny.STOP : LoopConfig.OnDeny.CONTINUE;
            count(onDeny == LoopConfig.OnDeny.STOP ? Fault.ON_DENY_STOP : Fault.ON_DENY_CONTINUE);
            this.config = new LoopConfig(1024, null, new RetryPolicy(1 + random.nextInt(4), Duration.ofSeconds(1),
                    Duration.ofSeconds(30)), TOOL_TIMEOUT, PriceTable.from(Settings.of(new Properties())),
                    CompactionConfig.from(Settings.of(settings)), onDeny);
            String fallback = random.nextInt(3) == 0 ? null : FALLBACK;
            if (fallback != null) {
                count(Fault.FALLBACK_MODEL);
            }
            this.writesAskApproval = random.nextBoolean();
            if (writesAskApproval && random.nextInt(4) == 0) {
                count(Fault.THREAD_ALLOWS_WRITES);
                allowances.apply(ThreadAllowances.key(null, "thread", "write_file"), true);
            }
            boolean clientTool = random.nextInt(4) == 0;
            List<ToolDefinition> tools = new ArrayList<>(TOOLS);
            if (clientTool) {
                count(Fault.CLIENT_TOOL_OFFERED);
                tools.add(CLIENT_TOOL);
            }
            this.turn = new AgentLoop.Turn(TURN, "thread", RUN, new ResolvedProvider("sim", null, null, MODEL),
                    fallback, "be brief", List.of(), "do it", tools, 1 + random.nextInt(4), TraceContext.fresh(), null,
                    clientTool ? Set.of(CLIENT_TOOL.name()) : Set.of());
            this.writesUntilFailure = random.nextInt(10) == 0 ? random.nextInt(60) : -1;
            this.shellCallsUntilBug = random.nextInt(10) == 0 ? random.nextInt(60) : -1;
            // drawn apart, so that what the schedule draws from its random is as it was before this fault was drawn
            Random apart = new Random(mixed(~seed));
            this.failsAtTheEnd = apart.nextInt(50) == 0;
            this.internalEndFails = apart.nextInt(8) == 0;
        }

        /**
         * The seed's bits spread (MurmurHash3's finaliser): {@code java.util.Random}'s first draws for
         * consecutive seeds are nearly the same, so schedules base, base + 1, ... would draw alike.
         */
        private static long mixed(long seed) {
            long z = seed;
            z = (z ^ (z >>> 33)) * 0xff51afd7ed558ccdL;
            z = (z ^ (z >>> 33)) * 0xc4ceb9fe1a85ec53L;
            return z ^ (z >>> 33);
        }

        /** Runs the turn to its end; returns how it ended. */
        String run() {
            if (random.nextInt(3) == 0) {
                cancelAt = clock.now + random.nextInt(200_000);
                count(Fault.CANCEL);
            }
            int crashes = random.nextInt(3);
            refusalsLeft = random.nextInt(3) == 0 ? 1 + random.nextInt(2) : 0;
            while (true) {
                writesUntilCrash = owner < crashes ? random.nextInt(40) : -1;
                drawHandover();
                takeOver();
                TurnProgress progress = owner == 0 ? TurnProgress.fresh(MODEL) : resumed();
                if (progress.endedStatus() != null) {
                    registry.finish(TURN, TurnPhase.endedAs(progress.endedStatus()));
                    break;
                }
                approvals.showAwaiting(TURN, progress, active);
                results.values().forEach(result -> at(clock.now, () -> deliver(result)));
                if (handoverAt <= clock.now) {
                    count(Fault.REVOKED_BEFORE_RUNNING);
                    revoke();
                }
                AgentLoop loop = new AgentLoop(turn, progress, active, registry, publisher(), provider(), waits(),
                        new GatewayMetrics(), config, allowances);
                try {
                    loop.run();
                    assertThat(registry.runningCount()).as("the turn's slot in the registry is released").isZero();
                    // ended here, its end commits; handed over at a step boundary, the revoke commits and lets go;
                    // cut off (or its commit refused), the log was aborted. A refused commit hands the turn over.
                    boolean handedOver = active.handover.isDone();
                    if (!fenced && tryCommit(handedOver ? 4 : 2) && !handedOver) {
                        break;
                    }
                    clock.now += random.nextInt(3_000);
                    owner++;
                } catch (Crash crash) {
                    count(Fault.CRASH);
                    abortUncommitted();
                    sameGatewayNext = false;
                    // the next owner takes over after the session timeout, at least
                    clock.now += 10_000 + random.nextInt(30_000);
                    owner++;
                    count(Fault.TAKEOVER);
                } finally {
                    loop.transitions().forEach(transition -> transitions.merge(transition, 1, Integer::sum));
                }
            }
            // the executor goes on after the turn ended: what it was asked to do happens, or not, by its decisions
            while (!agenda.isEmpty()) {
                Timed next = agenda.poll();
                clock.now = Math.max(clock.now, next.at());
                next.action().run();
            }
            return check();
        }

        /**
         * The partition's owner for the turn (as {@code TurnRunner.run} registers it): the gateway that accepted it,
         * the same gateway again when the group gives the partition back after a refused commit (its registry kept,
         * where the turn is finished or released), or another gateway, started before the cancel was accepted (its
         * inbox gave it to the registry) or after (its inbox never sees it). The approval rounds come from the
         * compacted source, whichever gateway it is.
         */
        private void takeOver() {
            if (owner > 0 && sameGatewayNext) {
                count(Fault.SAME_GATEWAY_TAKES_OVER);
            } else {
                registry = new TurnRegistry();
                gatewayStartedAt = 0;
                if (owner > 0 && clock.now >= cancelAt && random.nextBoolean()) {
                    count(Fault.OWNER_STARTED_AFTER_CANCEL);
                    gatewayStartedAt = clock.now;
                }
            }
            sameGatewayNext = false;
            fenced = false;
            hearCancel();
            approvals = new ApprovalDecisions();
            // a gateway started after an ask knows it from the compacted source (the call's awaiting_approval status)
            awaitingDecision.forEach(callId -> approvals.askedBefore(TURN, callId, toolOfCall.get(callId)));
            active = registry.register(new TurnStatus(TURN, "thread", RUN, TurnPhase.RUNNING));
        }

        /**
         * As {@code InboxRouting}: once the cancel is on {@code llm.control}, the inbox of the owner's gateway hands it
         * to the registry, once, if the inbox was reading then: to the running turn, or kept for a turn not running.
         */
        private void hearCancel() {
            if (clock.now >= cancelAt && gatewayStartedAt <= cancelAt && heardCancel.add(registry)) {
                registry.cancel(TURN, CANCELLED);
            }
        }

        /** Maybe the owner's partition is revoked while it runs the turn: a rebalance, or a drain (SIGTERM). */
        private void drawHandover() {
            handoverAt = Long.MAX_VALUE;
            cutOffAt = Long.MAX_VALUE;
            int draw = random.nextInt(8);
            if (draw < 2 && owner < 3) {
                handoverAt = clock.now + (random.nextInt(8) == 0 ? 0 : random.nextInt(200_000));
                handoverWait = draw == 0 ? REBALANCE_HANDOVER : DRAIN_TIMEOUT;
                count(draw == 0 ? Fault.REBALANCE : Fault.DRAIN);
            }
        }

        /** What the new owner reads of the turn, with {@link TurnResumer}'s logic, from the committed log. */
        private TurnProgress resumed() {
            List<TurnRequestRecord> steps = new ArrayList<>();
            List<StreamPayload> events = new ArrayList<>();
            TurnRequestRecord request = TurnRequestRecord.request(TURN, "thread", RUN, null, 0, null);
            for (Entry entry : log) {
                if (entry.step() != null) {
                    steps.add(request.stepDone(entry.step(), entry.checkpoint()));
                } else {
                    events.add(entry.event());
                }
            }
            return TurnResumer.progress(request, steps, MODEL, active, new TurnResumer.TurnLog() {
                @Override
                public List<StreamPayload> rawEvents(String runId, Instant since) {
                    return events;
                }

                @Override
                public List<ToolResult> toolResults(String turnId, Instant since) {
                    return List.copyOf(results.values());
                }

                @Override
                public List<ControlMessage> commands(String turnId, Instant since) {
                    return clock.now >= cancelAt ? List.of(ControlMessage.cancel(TURN, CANCELLED)) : List.of();
                }
            });
        }

        // ---- the simulated Kafka log: a transaction commits at random points, never inside an atomic group

        private TurnPublisher publisher() {
            return new TurnPublisher() {
                @Override
                public CompletableFuture<Void> rawEvent(String runId, TraceContext trace, StreamPayload payload) {
                    // (one bug in a schedule: the end that a failure inside publishes is sent as it should be)
                    if (failsAtTheEnd && !bugged && terminal(payload)) {
                        failsAtTheEnd = false;
                        count(Fault.SHELL_FAILS_AT_THE_END);
                        bugged = true;
                        throw new IllegalStateException("simulated bug in the gateway as it sends the turn's end");
                    }
                    if (internalEndFails && bugged && payload instanceof StreamPayload.ResponseError error
                            && ErrorCodes.INTERNAL.equals(error.error().code())) {
                        internalEndFails = false;
                        count(Fault.INTERNAL_END_FAILS);
                        throw new IllegalStateException("simulated bug in the gateway as it sends the INTERNAL end");
                    }
                    return write(new Entry(payload, null, null, owner, 0, clock.now));
                }

                @Override
                public CompletableFuture<Void> stepDone(int step, JsonNode checkpoint) {
                    return write(new Entry(null, step, checkpoint, owner,
                            (int) calls.stream().filter(call -> call.owner == owner).count(), clock.now));
                }

                @Override
                public CompletableFuture<Void> control(ControlMessage message) {
                    assertThat(message.approved() && allowances.allows(null, "thread", toolOfCall.get(message.callId())))
                            .as("the gateway approves only calls of a tool the thread allows: %s", message).isTrue();
                    return write(() -> uncommittedControls.add(message));
                }

                @Override
                public void failTransaction(Throwable why) {
                    // as OwnedPartition: the open transaction is refused at the next commit
                    transactionFailed = true;
                }

                @Override
                public void atomically(Runnable writes) {
                    atomicDepth++;
                    try {
                        writes.run();
                    } finally {
                        atomicDepth--;
                    }
                    maybeCommit();
                }

                @Override
                public Clock clock() {
                    return clock;
                }
            };
        }

        private CompletableFuture<Void> write(Entry entry) {
            return write(() -> log.add(entry));
        }

        /** One write of the owner's transactional producer: it fails once fenced, and the owner may crash at it. */
        private CompletableFuture<Void> write(Runnable append) {
            if (fenced) {
                // as OwnedPartition's send once the partition is let go
                return CompletableFuture.failedFuture(new IllegalStateException("the partition is no longer owned"));
            }
            if (writesUntilCrash == 0) {
                throw new Crash();
            }
            writesUntilCrash--;
            if (writesUntilFailure-- == 0) {
                count(Fault.WRITE_FAILED);
                transactionFailed = true;
                // the ownership loop commits at its interval, whatever the turn does meanwhile
                int by = owner;
                at(clock.now + random.nextInt(1_000), () -> {
                    if (owner == by && transactionFailed && !fenced) {
                        tryCommit(4);
                    }
                });
            }
            if (transactionFailed) {
                return CompletableFuture.failedFuture(new IllegalStateException("the transaction failed: a send failed"));
            }
            append.run();
            maybeCommit();
            return CompletableFuture.completedFuture(null);
        }

        private void maybeCommit() {
            if (atomicDepth == 0 && !fenced && random.nextInt(4) == 0) {
                tryCommit(4);
            }
        }

        /**
         * Commits, unless (drawn, one in {@code odds} while refusals are left) the coordinator aborted the transaction: then, as
         * {@code OwnedPartitions.commitAll}, the transaction is aborted, the partition's turns stop where they are (a
         * turn that ended here stays ended in its registry) and the partition is taken over again from what was
         * committed, by the same gateway or another.
         *
         * @return whether it committed
         */
        private boolean tryCommit(int odds) {
            if (active.cancel.isCancelled() && log.subList(committed, log.size()).stream()
                    .anyMatch(entry -> entry.event() != null && OwnedPartition.releases(entry.event()))) {
                // as OwnedPartition.commit: a release of a turn cancelled since must not commit
                count(Fault.RELEASE_OF_A_CANCELLED_TURN_REFUSED);
                refused();
                return false;
            }
            if (!transactionFailed && (refusalsLeft == 0 || random.nextInt(odds) != 0)) {
                commit();
                return true;
            }
            if (transactionFailed) {
                // as OwnedPartitions.commitAll on a KafkaException: the same gateway takes the partition over again
                sameGatewayNext = true;
            } else {
                refusalsLeft--;
                count(Fault.COMMIT_REFUSED);
            }
            if (clock.now >= cancelAt && log.subList(committed, log.size()).stream().anyMatch(entry -> entry.event()
                    instanceof StreamPayload.ResponseDone done && done.status() == ResponseStatus.ABORTED)) {
                count(Fault.COMMIT_REFUSED_AFTER_CANCEL);
            }
            refused();
            return false;
        }

        /** The commit is refused: what it held is aborted and the partition taken over again. */
        private void refused() {
            abortUncommitted();
            fenced = true;
            handoverAt = Long.MAX_VALUE;
            cutOffAt = Long.MAX_VALUE;
            active.handover.complete(null);
            active.cancel.cancel("handed over to another gateway");
            sameGatewayNext = sameGatewayNext || random.nextBoolean();
        }

        private void commit() {
            for (int i = committed; i < log.size(); i++) {
                StreamPayload event = log.get(i).event();
                if (OwnedPartition.releases(event) && event instanceof StreamPayload.ItemDone done) {
                    if (clock.now >= cancelAt && !readOnly(done.finalItem().name())) {
                        releasedAfterCancel.add("owner " + log.get(i).owner() + " released call "
                                + done.finalItem().callId() + " (written at " + log.get(i).at() + ") in a commit at "
                                + clock.now + ", after the cancel was accepted at " + cancelAt);
                    }
                    if (log.subList(0, i).stream().noneMatch(entry -> Integer.valueOf(stepOf(done.itemId()))
                            .equals(entry.step()))) {
                        count(Fault.READ_ONLY_STARTED_WHILE_STREAMING);
                    }
                    receive(done.finalItem().callId(), done.finalItem().name());
                }
            }
            committed = log.size();
            uncommittedControls.forEach(message -> at(clock.now, () -> decide(message.callId(), message.approved(),
                    message.reason(), false)));
            uncommittedControls.clear();
        }

        /** What the owner did not commit is aborted; the executor's work goes on (it is another process). */
        private void abortUncommitted() {
            log.subList(committed, log.size()).clear();
            uncommittedControls.clear();
            transactionFailed = false;
        }

        // ---- the simulated tool executor: runs a call once its item_done is committed

        /** A call reached the executor: it runs it, refuses it, or asks a person first. */
        private void receive(String callId, String name) {
            received.merge(callId, 1, Integer::sum);
            toolOfCall.put(callId, name);
            long start = clock.now + random.nextInt(2_000);
            int fate = random.nextInt(12);
            if (fate == 0) {
                toolNeverAnswers.add(callId);
                count(Fault.TOOL_NEVER_ANSWERS);
                return;
            }
            if (fate == 1) {
                count(Fault.TOOL_LATE);
                start += TOOL_TIMEOUT.toMillis() / 2;
            }
            if (name.equals("write_file") && fate == 2) {
                count(Fault.TOOL_DENIED);
                long at = start;
                at(at, () -> refuse(callId, name, "the policy denies write_file", at));
            } else if (name.equals("write_file") && writesAskApproval) {
                ask(callId, start);
            } else {
                execute(callId, name, start, fate == 3);
            }
        }

        private void execute(String callId, String name, long start, boolean fails) {
            if (fails) {
                count(Fault.TOOL_FAILS);
            }
            at(start, () -> {
                ran.add(callId);
                startedAt.put(callId, start);
                registry.toolStarted(TURN, callId, start);
            });
            long done = start + random.nextInt(3_000);
            ErrorInfo error = fails ? ErrorInfo.of("TOOL_ERROR", "no such file") : null;
            ToolResult result = new ToolResult(callId, TURN, name, error == null, TextNode.valueOf("out-" + callId),
                    error, start, done);
            at(done, () -> answer(result));
        }

        private void refuse(String callId, String name, String why, long at) {
            answer(new ToolResult(callId, TURN, name, false, TextNode.valueOf(DENIAL + ": " + why),
                    ErrorInfo.of(ErrorCodes.TOOL_CALL_DENIED, why), 0, at));
        }

        private void answer(ToolResult result) {
            results.put(result.callId(), result);
            deliver(result);
        }

        /**
         * The executor asks on {@code llm.control} and holds the call; people decide on time, late, twice,
         * both ways, or never (the executor's own denial at its approval timeout is then the decision).
         */
        private void ask(String callId, long at) {
            count(Fault.APPROVAL_ASKED);
            at(at, () -> {
                awaitingDecision.add(callId);
                // as InboxRouting routes the ask, with its tool: to the approval rounds and the running turn
                approvals.asked(TURN, callId, toolOfCall.get(callId));
                registry.approvalRequested(TURN, callId);
            });
            long timeout = at + APPROVAL_TIMEOUT.toMillis();
            at(timeout, () -> decide(callId, false, "no approval within " + APPROVAL_TIMEOUT.toSeconds() + " s", false));
            long decided = at + random.nextInt((int) APPROVAL_TIMEOUT.toMillis());
            boolean approve = random.nextBoolean();
            switch (random.nextInt(7)) {
                case 0 -> {
                    count(Fault.APPROVAL_ALLOWED);
                    at(decided, () -> decide(callId, true, null, false));
                }
                case 1 -> {
                    count(Fault.APPROVAL_DENIED);
                    at(decided, () -> decide(callId, false, "the user said no", false));
                }
                case 2 -> {
                    count(Fault.APPROVAL_LATE);
                    at(timeout + random.nextInt(30_000), () -> decide(callId, approve, "late", false));
                }
                case 3 -> {
                    count(Fault.APPROVAL_DUPLICATED);
                    at(decided, () -> decide(callId, approve, "once", false));
                    at(decided + random.nextInt(5_000), () -> decide(callId, approve, "twice", false));
                }
                case 4 -> {
                    count(Fault.APPROVAL_CONTRADICTORY);
                    at(decided, () -> decide(callId, approve, "first", false));
                    at(decided + random.nextInt(5_000), () -> decide(callId, !approve, "second thoughts", false));
                }
                case 5 -> {
                    // allowed with remember: true, so the thread allows write_file from then on
                    count(Fault.APPROVAL_REMEMBERED);
                    at(decided, () -> decide(callId, true, "always", true));
                }
                default -> count(Fault.APPROVAL_NEVER);
            }
        }

        /**
         * A decision on {@code llm.control}: the gateway's approval rounds and the executor read it in the
         * same order; the first after the ask stands, for both. One that stands with {@code remember} allows
         * the call's tool for the rest of the thread, as the approval route stores it: by the tool the ask named.
         */
        private void decide(String callId, boolean approved, String reason, boolean remember) {
            approvals.decided(TURN, callId, approved, reason);
            if (!awaitingDecision.remove(callId)) {
                return;
            }
            standing.put(callId, approved);
            assertThat(approvals.round(TURN, callId).decision).as("the gateway reports the decision on %s that "
                    + "stands", callId).isCompletedWithValue(new ApprovalDecisions.Decision(approved, reason));
            if (ThreadAllowances.REASON.equals(reason)) {
                count(Fault.ALLOWED_FOR_THE_THREAD);
            }
            if (remember && approved) {
                String tool = approvals.round(TURN, callId).toolName();
                assertThat(tool).as("the ask of %s names its tool, so remember can allow it", callId).isNotNull();
                allowances.apply(ThreadAllowances.key(null, "thread", tool), true);
            }
            if (approved) {
                execute(callId, "write_file", clock.now, random.nextInt(6) == 0);
            } else {
                refuse(callId, "write_file", reason, clock.now);
            }
        }

        private void deliver(ToolResult result) {
            registry.deliver(TURN, result);
        }

        /**
         * The gateway fails inside at the drawn model call, streamed event or wait (once): the provider's adapter or
         * the turn's wait throws. (OwnedPartition's writes never throw, failing a send's future instead; a send that
         * throws stands for a bug of the shell's: {@link Fault#SHELL_FAILS_AT_THE_END}.)
         */
        private void maybeFailInside() {
            if (shellCallsUntilBug-- == 0) {
                count(Fault.GATEWAY_BUG);
                bugged = true;
                throw new IllegalStateException("simulated bug in the gateway");
            }
        }

        // ---- time: the loop's waits run what is scheduled until the time they wait for

        record Timed(long at, int order, Runnable action) implements Comparable<Timed> {
            @Override
            public int compareTo(Timed other) {
                return at != other.at ? Long.compare(at, other.at) : Integer.compare(order, other.order);
            }
        }

        private void at(long when, Runnable action) {
            agenda.add(new Timed(when, timers++, action));
        }

        /**
         * Moves the clock to {@code until}, running what is due on the way: the executor's work, the cancel,
         * and the partition's revocation and handover deadline.
         */
        private void advance(long until, java.util.function.BooleanSupplier stop) {
            while (!stop.getAsBoolean()) {
                Timed next = agenda.peek();
                long cancel = gatewayStartedAt <= cancelAt && !heardCancel.contains(registry) ? cancelAt : Long.MAX_VALUE;
                long due = Math.min(Math.min(next == null ? Long.MAX_VALUE : next.at(), cancel),
                        Math.min(handoverAt, cutOffAt));
                if (due > until) {
                    clock.now = Math.max(clock.now, until);
                    return;
                }
                clock.now = Math.max(clock.now, due);
                if (due == cancel) {
                    hearCancel();
                } else if (due == handoverAt) {
                    revoke();
                } else if (due == cutOffAt) {
                    cutOff();
                } else {
                    agenda.poll().action().run();
                }
            }
        }

        /**
         * As {@code OwnedPartitions.revoked}: the turn is asked to stop at its next step boundary, and what it
         * wrote so far is committed while it gets there.
         */
        private void revoke() {
            handoverAt = Long.MAX_VALUE;
            cutOffAt = clock.now + handoverWait.toMillis();
            active.handover.complete(null);
            tryCommit(4);
        }

        /** The handover deadline passed inside a step: the owner aborts what it did not commit and lets go. */
        private void cutOff() {
            cutOffAt = Long.MAX_VALUE;
            count(Fault.HANDOVER_CUT_OFF);
            abortUncommitted();
            fenced = true;
            active.cancel.cancel("handed over to another gateway");
        }

        private LoopWaits waits() {
            return new LoopWaits() {
                @Override
                public <T> T next(BlockingQueue<T> inputs, long deadline) {
                    maybeFailInside();
                    advance(deadline, () -> !inputs.isEmpty());
                    return inputs.poll();
                }

                @Override
                public RandomGenerator jitter() {
                    return random;
                }
            };
        }

        // ---- the simulated provider

        private ModelCaller provider() {
            return (ProviderAdapter adapter, ProviderEndpoint endpoint, ModelRequest request, StepItems items,
                    CancelSignal cancel) -> {
                Usage usage = new Usage(1 + random.nextInt(1_000_000), 0, 0);
                List<Conversation.Entry> conversation = request.conversation();
                boolean summary = !conversation.isEmpty() && conversation.get(conversation.size() - 1)
                        instanceof Conversation.UserText text && text.text().equals(CompactionPrompts.SUMMARISE);
                ModelCall call = new ModelCall(summary ? 0 : stepOf(items), usage, owner);
                assertThat(clock.now).as("owner %d calls the model for step %d after the cancel was accepted", owner,
                        call.step).isLessThan(cancelAt);
                if (!summary) {
                    checkNoCompletedStepIsCalledAgain(call.step);
                    checkTheModelIsNotCalledAfterADenial(call.step);
                }
                calls.add(call);
                // the usage of a call whose adapter throws never reaches the gateway: it accounts for none
                call.usage = new Usage(0, 0, 0);
                maybeFailInside();
                StepOutcome outcome = summary ? summarise(items, usage, cancel) : answer(call, request, items, usage, cancel);
                call.usage = outcome.usage() == null ? new Usage(0, 0, 0) : outcome.usage();
                call.failed = outcome.status() == ResponseStatus.ERROR;
                return outcome;
            };
        }

        private static int stepOf(StepItems items) {
            return Integer.parseInt(items.idPrefix().substring((RUN + "-s").length()));
        }

        /** The step of an item id {@code {runId}-s{step}-{n}}. */
        private static int stepOf(String itemId) {
            return Integer.parseInt(itemId.split("-s")[1].split("-")[0]);
        }

        /**
         * A compaction's summarisation call: it may be refused (429 with and without retry-after, 529, 500), break,
         * answer nothing, or be cancelled. The machine retries it as a step's call, on the fallback model too.
         */
        private StepOutcome summarise(StepItems items, Usage usage, CancelSignal cancel) {
            count(Fault.COMPACTION);
            int fault = random.nextInt(14);
            switch (fault) {
                case 0 -> {
                    count(Fault.COMPACTION_FAILS);
                    return SERVER_ERROR;
                }
                case 3 -> {
                    count(Fault.COMPACTION_HTTP_429_RETRY_AFTER);
                    return refusedAsRateLimited(true);
                }
                case 4 -> {
                    count(Fault.COMPACTION_HTTP_429);
                    return refusedAsRateLimited(false);
                }
                case 5 -> {
                    count(Fault.COMPACTION_HTTP_529);
                    return OVERLOADED;
                }
                default -> {
                    // streams
                }
            }
            advance(clock.now + 20 + random.nextInt(2_000), cancel::isCancelled);
            if (cancel.isCancelled()) {
                count(Fault.COMPACTION_CANCELLED);
                items.cancelAll();
                return new StepOutcome(ResponseStatus.ABORTED, null, usage, List.of(), Json.MAPPER.createArrayNode(),
                        null, false, false, null, items.published());
            }
            StepItems.Item item = items.startMessage(null);
            if (fault == 1) {
                count(Fault.COMPACTION_FAILS);
                items.failAll(ErrorInfo.of(ErrorCodes.CONNECTION_FAILED, "the stream failed"));
                return new StepOutcome(ResponseStatus.ERROR, null, usage, List.of(), Json.MAPPER.createArrayNode(),
                        ErrorInfo.of(ErrorCodes.CONNECTION_FAILED, "the stream failed"), true, false, null,
                        items.published());
            }
            if (fault == 2) {
                // an answer without text: the compaction fails too
                count(Fault.COMPACTION_FAILS);
            } else {
                item.append("the story so far");
            }
            item.done(null);
            return new StepOutcome(ResponseStatus.COMPLETE, FinishReasons.STOP, usage, List.of(),
                    Json.MAPPER.createArrayNode(), null, false, false, null, items.published());
        }

        private StepOutcome answer(ModelCall call, ModelRequest request, StepItems items, Usage usage,
                                   CancelSignal cancel) {
            int fault = random.nextInt(20);
            switch (fault) {
                case 0 -> {
                    count(Fault.HTTP_429_RETRY_AFTER);
                    return refusedAsRateLimited(true);
                }
                case 1 -> {
                    count(Fault.HTTP_429);
                    return refusedAsRateLimited(false);
                }
                case 2 -> {
                    count(Fault.HTTP_529);
                    return OVERLOADED;
                }
                case 3 -> {
                    count(Fault.HTTP_500);
                    return SERVER_ERROR;
                }
                case 4 -> {
                    count(Fault.PROMPT_TOO_LONG);
                    return StepOutcome.refused(ErrorInfo.of("invalid_request_error",
                            "prompt is too long: 250000 tokens > 200000 maximum"), false, false, null, 0);
                }
                default -> {
                    return stream(call, items, usage, cancel, fault, request.tools());
                }
            }
        }

        /** A 429, with a {@code retry-after} of 1 to 40 s or none. */
        private StepOutcome refusedAsRateLimited(boolean retryAfter) {
            return StepOutcome.refused(ErrorInfo.of("rate_limit_error", "slow down"), true, false,
                    retryAfter ? Duration.ofSeconds(1 + random.nextInt(40)) : null, 0);
        }

        /** Streams reasoning, text and maybe tool calls, breaking where the fault says. */
        private StepOutcome stream(ModelCall call, StepItems items, Usage usage, CancelSignal cancel, int fault,
                                   List<ToolDefinition> offered) {
            int toolCalls = random.nextInt(3) == 0 ? 0 : random.nextInt(3);
            boolean maxTokens = toolCalls == 0 && random.nextInt(4) == 0;
            List<Runnable> events = new ArrayList<>();
            ArrayNode content = Json.MAPPER.createArrayNode();
            if (random.nextBoolean()) {
                StepItems.Item[] thinking = new StepItems.Item[1];
                events.add(() -> thinking[0] = items.startReasoning(null));
                events.add(() -> thinking[0].append("hmm"));
                events.add(() -> thinking[0].done(null));
            }
            StepItems.Item[] text = new StepItems.Item[1];
            events.add(() -> text[0] = items.startMessage("Let "));
            events.add(() -> text[0].append("me see."));
            events.add(() -> text[0].done(null));
            content.addObject().put("type", "text").put("text", "Let me see.");
            int toolBlocksEnd = -1;
            for (int i = 0; i < toolCalls; i++) {
                String name = offered.get(random.nextInt(offered.size())).name();
                if (name.equals(CLIENT_TOOL.name())) {
                    count(Fault.CLIENT_TOOL_CALLED);
                }
                StepItems.Item[] use = new StepItems.Item[1];
                String callId = "call-" + nextCallId++;
                events.add(() -> use[0] = items.startFunctionCall(name, callId));
                events.add(() -> use[0].appendArguments("{\"path\":\"a.txt\"}"));
                events.add(() -> use[0].done(null));
                toolBlocksEnd = events.size();
                content.addObject().put("type", "tool_use").put("name", name);
            }
            if (toolCalls > 0) {
                count(Fault.TOOL_CALLS);
            }
            int breakAt = -1;
            String error = null;
            boolean overloaded = false;
            if (fault == 5) {
                count(Fault.BROKEN_BEFORE_OUTPUT);
                breakAt = 0;
                error = ErrorCodes.CONNECTION_FAILED;
            } else if (fault == 6) {
                count(Fault.BROKEN_MID_STREAM);
                breakAt = 1 + random.nextInt(events.size() - 1);
                error = ErrorCodes.CONNECTION_FAILED;
            } else if (fault == 7 && toolBlocksEnd > 0) {
                count(Fault.BROKEN_AFTER_TOOL_BLOCK);
                breakAt = toolBlocksEnd;
                error = ErrorCodes.CONNECTION_FAILED;
            } else if (fault == 8) {
                count(Fault.STALLED);
                breakAt = random.nextInt(events.size());
                error = ErrorCodes.STREAM_STALLED;
            } else if (fault == 9) {
                count(Fault.OVERLOADED_IN_STREAM);
                breakAt = random.nextInt(events.size());
                error = "overloaded_error";
                overloaded = true;
            }
            for (int i = 0; i < events.size(); i++) {
                advance(clock.now + 20, cancel::isCancelled);
                if (i == breakAt && error.equals(ErrorCodes.STREAM_STALLED)) {
                    // nothing comes until the stall watchdog ends the stream, unless a cancel closes it first
                    advance(clock.now + STALL.toMillis(), cancel::isCancelled);
                }
                if (cancel.isCancelled()) {
                    items.cancelAll();
                    return new StepOutcome(ResponseStatus.ABORTED, null, usage, items.toolCalls(), content, null,
                            false, false, null, items.published());
                }
                if (i == breakAt) {
                    // as StreamNormalizer.fail: a failure a retry may cure withdraws when the caller will retry
                    if (items.withdrawsOnRetryableFailure()) {
                        items.withdraw();
                    } else {
                        items.failAll(ErrorInfo.of(error, "the stream failed"));
                    }
                    return new StepOutcome(ResponseStatus.ERROR, null, usage, items.toolCalls(), content,
                            ErrorInfo.of(error, "the stream failed"), true, overloaded, null, items.published());
                }
                maybeFailInside();
                events.get(i).run();
            }
            if (maxTokens) {
                count(Fault.MAX_TOKENS);
            }
            call.complete = true;
            // a tool call's item_done waits for the checkpoint anyway: the text is the last item only without one
            call.lastItem = toolCalls == 0 ? text[0].id() : null;
            return new StepOutcome(ResponseStatus.COMPLETE, maxTokens ? FinishReasons.LENGTH
                    : toolCalls > 0 ? FinishReasons.TOOL_CALLS : FinishReasons.STOP, usage, items.toolCalls(), content,
                    null, false, false, null, items.published());
        }

        /**
         * A step is complete to a reader once the committed log shows its last item done or its
         * {@code step_completed} status: it must show the step's checkpoint too, so the step is never
         * called again.
         */
        private void checkNoCompletedStepIsCalledAgain(int step) {
            Set<String> lastItems = new HashSet<>();
            calls.stream().filter(call -> call.step == step && call.lastItem != null)
                    .forEach(call -> lastItems.add(call.owner + ":" + call.lastItem));
            boolean checkpointed = false;
            boolean complete = false;
            for (Entry entry : log.subList(0, committed)) {
                StreamPayload event = entry.event();
                if (entry.step() != null && entry.step() == step) {
                    checkpointed = true;
                } else if (event instanceof StreamPayload.ItemDone done
                        && lastItems.contains(entry.owner() + ":" + done.itemId())
                        || event instanceof StreamPayload.TurnStatus status && Integer.valueOf(step).equals(status.step())) {
                    complete = true;
                }
            }
            assertThat(checkpointed).as("step %d is called again after its checkpoint", step).isFalse();
            assertThat(complete).as("step %d is called again although the committed log shows it complete, "
                    + "without its checkpoint", step).isFalse();
        }

        /**
         * With {@code on-deny} {@code stop}, a step whose call was denied is the turn's last: once the owner has
         * published (or read) a denial's output, the model is not called for a later step.
         */
        private void checkTheModelIsNotCalledAfterADenial(int step) {
            if (config.onDeny() != LoopConfig.OnDeny.STOP) {
                return;
            }
            for (Entry entry : log) {
                if (entry.event() instanceof StreamPayload.ItemDone done && denial(done)) {
                    assertThat(stepOfItem(done.itemId())).as("the model is called for step %d after a denial in "
                            + "%s (on-deny stop)", step, done.itemId()).isGreaterThanOrEqualTo(step);
                }
            }
        }

        /** The output of a call the executor refused with {@code DENIED}: the denial reached the turn. */
        private boolean denial(StreamPayload.ItemDone done) {
            if (done.finalItem() == null || done.finalItem().knownType() != ItemType.FUNCTION_CALL_OUTPUT) {
                return false;
            }
            ToolResult result = results.get(done.finalItem().callId());
            return result != null && result.error() != null && ErrorCodes.TOOL_CALL_DENIED.equals(result.error().code())
                    && result.output().equals(done.finalItem().output());
        }

        private static int stepOfItem(String itemId) {
            return Integer.parseInt(itemId.substring((RUN + "-s").length()).split("-")[0]);
        }

        // ---- the invariants of the committed log

        private String check() {
            List<StreamPayload> events = new ArrayList<>();
            Set<Integer> checkpointed = new HashSet<>();
            for (Entry entry : log) {
                if (entry.event() != null) {
                    events.add(entry.event());
                    if (entry.event() instanceof StreamPayload.ItemDone done && done.finalItem() != null
                            && done.finalItem().knownType() == ItemType.FUNCTION_CALL
                            && !readOnly(done.finalItem().name())) {
                        assertThat(checkpointed).as("call %s runs only after its step is committed",
                                done.finalItem().callId()).contains(stepOf(done.itemId()));
                    }
                } else {
                    checkpointed.add(entry.step());
                }
            }
            // a client-side call the turn returns to its caller stays open: the topology completes it, with its
            // streamed arguments, when the turn closes
            Set<String> openClientCalls = openClientCalls(events);
            ItemInvariants.assertEveryStartedItemIsClosedOnceAndNothingFollows(events.stream()
                    .filter(event -> !openClientCalls.contains(ItemInvariants.itemId(event))).toList());
            // a compaction summary is published whole (its item_done holds it), not streamed
            Set<String> summaries = new HashSet<>();
            events.stream().filter(event -> event instanceof StreamPayload.ItemStart start
                    && Origins.COMPACTION.equals(start.origin())).forEach(event -> summaries.add(ItemInvariants.itemId(event)));
            ItemInvariants.assertFinalContentIsTheStreamedText(events.stream()
                    .filter(event -> !summaries.contains(ItemInvariants.itemId(event))).toList());
            checkContinuationsJoinTheirMessage(events);
            checkToolStatuses(events);
            StreamPayload terminal = events.get(events.size() - 1);
            checkAnAcceptedCancelEndsTheTurn();
            assertThat(events.stream().filter(Schedule::terminal)).as("exactly one terminal event").hasSize(1);
            assertThat(terminal(terminal)).as("the terminal event is the last").isTrue();

            Set<String> released = new HashSet<>();
            Map<String, Integer> outputs = new HashMap<>();
            Map<String, String> callOfOutput = new HashMap<>();
            Set<String> withdrawnCalls = new HashSet<>();
            Map<String, String> callOfItem = new HashMap<>();
            Map<String, String> toolOf = new HashMap<>();
            for (StreamPayload event : events) {
                if (event instanceof StreamPayload.ItemStart start && start.callId() != null
                        && ItemType.FUNCTION_CALL.wire().equals(start.itemType())) {
                    callOfItem.put(start.itemId(), start.callId());
                    toolOf.put(start.callId(), start.name());
                } else if (event instanceof StreamPayload.ItemDone done && done.finalItem() != null) {
                    if (done.finalItem().knownType() == ItemType.FUNCTION_CALL) {
                        released.add(done.finalItem().callId());
                    } else if (done.finalItem().knownType() == ItemType.FUNCTION_CALL_OUTPUT) {
                        outputs.merge(done.finalItem().callId(), 1, Integer::sum);
                        callOfOutput.put(done.itemId(), done.finalItem().callId());
                    }
                } else if (event instanceof StreamPayload.ItemWithdrawn withdrawn) {
                    if (callOfItem.containsKey(withdrawn.itemId())) {
                        withdrawnCalls.add(callOfItem.get(withdrawn.itemId()));
                    } else if (callOfOutput.containsKey(withdrawn.itemId())) {
                        // the output of a failed step's call, taken back with the step by the next owner
                        outputs.merge(callOfOutput.get(withdrawn.itemId()), -1, Integer::sum);
                    }
                }
            }
            for (String call : withdrawnCalls) {
                if (!readOnly(toolOf.get(call))) {
                    assertThat(received).as("a withdrawn attempt's call %s never reaches the executor", call)
                            .doesNotContainKey(call);
                }
                assertThat(outputs.getOrDefault(call, 0)).as("a withdrawn attempt's call %s gets no output", call)
                        .isZero();
            }
            received.forEach((call, times) -> assertThat(times).as("call %s reaches the executor once", call)
                    .isEqualTo(1));
            boolean returnsClientCalls = terminal instanceof StreamPayload.ResponseDone done
                    && done.status() == ResponseStatus.COMPLETE && FinishReasons.TOOL_CALLS.equals(done.finishReason());
            assertThat(!openClientCalls.isEmpty()).as("client-side calls are left open for the caller exactly when "
                    + "the turn returns them (finish reason tool_calls)").isEqualTo(returnsClientCalls);
            Set<String> committedCalls = new HashSet<>();
            log.stream().filter(entry -> entry.step() != null).forEach(entry -> entry.checkpoint().path("toolCalls")
                    .forEach(call -> committedCalls.add(call.path("callId").asText())));
            callOfItem.forEach((item, call) -> {
                if (!CLIENT_TOOL.name().equals(toolOf.get(call))) {
                    return;
                }
                assertThat(received).as("client-side call %s never reaches the executor", call).doesNotContainKey(call);
                if (committedCalls.contains(call)) {
                    // returned to the caller, its answer is the caller's next request; else the turn answers it
                    assertThat(outputs.getOrDefault(call, 0)).as("client-side call %s answered by exactly one output "
                            + "unless the caller answers it", call).isEqualTo(openClientCalls.contains(item) ? 0 : 1);
                }
            });
            assertThat(received.keySet()).as("only released calls run").containsAll(ran);
            standing.forEach((call, approved) -> assertThat(ran.contains(call))
                    .as("call %s runs exactly when the decision that stands approves it", call).isEqualTo(approved));
            for (String call : released) {
                if (!withdrawnCalls.contains(call)) {
                    assertThat(outputs.getOrDefault(call, 0)).as("call %s answered by exactly one output", call)
                            .isEqualTo(1);
                }
            }
            boolean deniedInTurn = events.stream().anyMatch(event -> event instanceof StreamPayload.ItemDone done
                    && denial(done));
            checkUsageIsCountedOnce(terminal);
            if (terminal instanceof StreamPayload.ResponseDone done) {
                if (config.onDeny() == LoopConfig.OnDeny.CONTINUE || !deniedInTurn) {
                    assertThat(done.finishReason()).as("only a denial with on-deny stop ends a turn as denied")
                            .isNotEqualTo(FinishReasons.TOOL_DENIED);
                } else if (done.status() == ResponseStatus.COMPLETE) {
                    // (a client-side call of the step is closed, not returned: the turn stops because of the denial)
                    assertThat(done.finishReason()).as("a denial with on-deny stop ends the turn")
                            .isEqualTo(FinishReasons.TOOL_DENIED);
                }
                return done.status().wire() + (done.finishReason() == null ? "" : "/" + done.finishReason());
            }
            ErrorInfo error = ((StreamPayload.ResponseError) terminal).error();
            if (!bugged) {
                assertThat(error.code()).as("the loop never fails inside the gateway: %s", error.message())
                        .isNotEqualTo(ErrorCodes.INTERNAL);
            }
            return "error/" + error.code();
        }

        /** The client-side calls never closed: each started, and neither done, failed, cancelled nor withdrawn. */
        private static Set<String> openClientCalls(List<StreamPayload> events) {
            Set<String> open = new HashSet<>();
            for (StreamPayload event : events) {
                if (event instanceof StreamPayload.ItemStart start && CLIENT_TOOL.name().equals(start.name())
                        && ItemType.FUNCTION_CALL.wire().equals(start.itemType())) {
                    open.add(start.itemId());
                } else if (event instanceof StreamPayload.ItemDone || event instanceof StreamPayload.ItemError
                        || event instanceof StreamPayload.ItemCancelled || event instanceof StreamPayload.ItemWithdrawn) {
                    open.remove(ItemInvariants.itemId(event));
                }
            }
            return open;
        }

        /**
         * However the turn ends (complete, failed, cancelled, after handovers): its end reports every provider
         * call it accounts for once, the calls that failed apart. A failed call's usage is in
         * {@code failed_attempts_usage} only, and a turn whose calls all failed reports no step usage.
         */
        private void checkUsageIsCountedOnce(StreamPayload terminal) {
            Usage usage;
            Usage failed;
            if (terminal instanceof StreamPayload.ResponseDone done) {
                usage = done.usage();
                failed = done.failedAttemptsUsage();
            } else {
                StreamPayload.ResponseError error = (StreamPayload.ResponseError) terminal;
                usage = error.usage();
                failed = error.failedAttemptsUsage();
            }
            assertThat(tokens(usage) + tokens(failed))
                    .as("usage counted once per provider call, failed attempts included (%s)", terminal.type())
                    .isEqualTo(expectedTokens());
            assertThat(tokens(failed)).as("the failed calls' usage, reported apart (%s)", terminal.type())
                    .isEqualTo(expectedFailedTokens());
        }

        /**
         * Once the cancel is accepted (on {@code llm.control}), whichever gateway owns the turn then or later, through
         * refused commits and takeovers: no call reaches the executor from a commit made after it (but a read-only
         * one, which may run although its attempt ends), whenever its release was written: the executor sees
         * releases by commit; and an end written after it is {@code aborted}, or {@code INTERNAL} after a drawn bug.
         * (The model is not called either: {@link #provider} checks each call.)
         */
        private void checkAnAcceptedCancelEndsTheTurn() {
            assertThat(releasedAfterCancel).as("no call is released by a commit after the cancel").isEmpty();
            for (Entry entry : log) {
                if (entry.at() < cancelAt) {
                    continue;
                }
                if (terminal(entry.event()) && !(bugged && entry.event() instanceof StreamPayload.ResponseError error
                        && ErrorCodes.INTERNAL.equals(error.error().code()))) {
                    // (a bug ends the turn where it is, maybe before the cancel waiting in its inputs is fed)
                    assertThat(entry.event()).as("owner %d ended the turn after the cancel was accepted", entry.owner())
                            .isInstanceOfSatisfying(StreamPayload.ResponseDone.class, done ->
                                    assertThat(done.status()).isEqualTo(ResponseStatus.ABORTED));
                }
            }
        }

        /**
         * A {@code max_tokens} continuation's text joins the message the continued step left open: at each
         * {@code continuing} status that message is open, and it ends done with the continued text at its start
         * (or, withdrawn because an attempt that wrote into it failed, a later message starts with that text).
         */
        private static void checkContinuationsJoinTheirMessage(List<StreamPayload> events) {
            Map<String, StringBuilder> openMessages = new java.util.LinkedHashMap<>();
            for (int i = 0; i < events.size(); i++) {
                StreamPayload event = events.get(i);
                if (event instanceof StreamPayload.ItemStart start && ItemType.MESSAGE.wire().equals(start.itemType())) {
                    openMessages.put(start.itemId(), new StringBuilder(start.initialContent() == null ? ""
                            : start.initialContent()));
                } else if (event instanceof StreamPayload.ItemDelta delta && openMessages.containsKey(delta.itemId())) {
                    openMessages.get(delta.itemId()).append(delta.deltaContent());
                } else if (event instanceof StreamPayload.TurnStatus status && status.status() == TurnActivity.CONTINUING) {
                    assertThat(openMessages).as("the continued step's message is open at its continuing status")
                            .hasSize(1);
                    var carried = openMessages.entrySet().iterator().next();
                    checkJoined(events.subList(i + 1, events.size()), carried.getKey(), carried.getValue().toString());
                } else if (ItemInvariants.itemId(event) != null && !(event instanceof StreamPayload.ItemStart)
                        && !(event instanceof StreamPayload.ItemDelta)) {
                    openMessages.remove(ItemInvariants.itemId(event));
                }
            }
        }

        private static void checkJoined(List<StreamPayload> after, String itemId, String text) {
            boolean withdrawn = false;
            for (StreamPayload event : after) {
                if (!withdrawn && itemId.equals(ItemInvariants.itemId(event))) {
                    if (event instanceof StreamPayload.ItemDone done) {
                        assertThat(done.finalItem().content()).as("the continuation joins %s", itemId).startsWith(text);
                        return;
                    }
                    assertThat(event).as("the continued message %s ends done or withdrawn", itemId)
                            .isInstanceOfAny(StreamPayload.ItemDelta.class, StreamPayload.ItemWithdrawn.class);
                    withdrawn = event instanceof StreamPayload.ItemWithdrawn;
                } else if (withdrawn && event instanceof StreamPayload.ItemStart start
                        && ItemType.MESSAGE.wire().equals(start.itemType()) && !Origins.COMPACTION.equals(start.origin())) {
                    assertThat(start.initialContent()).as("the withdrawn %s is shown again", itemId).startsWith(text);
                    return;
                }
            }
            throw new AssertionError("the continued message " + itemId + " is never closed or shown again");
        }

        /**
         * A call is {@code pending} as soon as its input starts streaming (before its first argument delta),
         * and a call that completes was {@code running} first.
         */
        private static void checkToolStatuses(List<StreamPayload> events) {
            Map<String, String> itemOfCall = new HashMap<>();
            Map<String, List<ToolState>> statuses = new HashMap<>();
            Set<String> streaming = new HashSet<>();
            for (StreamPayload event : events) {
                if (event instanceof StreamPayload.ItemStart start && ItemType.FUNCTION_CALL.wire().equals(start.itemType())) {
                    itemOfCall.put(start.callId(), start.itemId());
                } else if (event instanceof StreamPayload.ItemDelta delta && itemOfCall.containsValue(delta.itemId())) {
                    streaming.add(delta.itemId());
                } else if (event instanceof StreamPayload.ToolStatus status) {
                    List<ToolState> seen = statuses.computeIfAbsent(status.callId(), id -> new ArrayList<>());
                    if (seen.isEmpty()) {
                        assertThat(status.status()).as("call %s is pending first", status.callId())
                                .isEqualTo(ToolState.PENDING);
                        assertThat(streaming).as("call %s is pending before its input streams", status.callId())
                                .doesNotContain(itemOfCall.get(status.callId()));
                    }
                    if (status.status() == ToolState.COMPLETED) {
                        assertThat(seen).as("call %s never skips running", status.callId()).contains(ToolState.RUNNING);
                    }
                    seen.add(status.status());
                }
            }
        }

        /**
         * The tokens of every provider call the turn accounts for: all of the owner's that ended it, and
         * each earlier owner's up to its last committed checkpoint (what a crashed or cut-off owner used
         * after that is lost with it; one that handed over at a step boundary made no call after it).
         */
        private long expectedTokens() {
            return accountedCalls().stream().mapToLong(call -> call.usage.promptTokens()).sum();
        }

        /** The tokens of the accounted calls that failed. */
        private long expectedFailedTokens() {
            return accountedCalls().stream().filter(call -> call.failed).mapToLong(call -> call.usage.promptTokens()).sum();
        }

        /** The provider calls the turn accounts for (see {@link #expectedTokens}). */
        private List<ModelCall> accountedCalls() {
            Map<Integer, Integer> accounted = new HashMap<>();
            log.stream().filter(entry -> entry.step() != null)
                    .forEach(entry -> accounted.merge(entry.owner(), entry.ownerCalls(), Math::max));
            int ender = log.get(log.size() - 1).owner();
            List<ModelCall> counted = new ArrayList<>();
            int[] made = new int[owner + 1];
            for (ModelCall call : calls) {
                made[call.owner]++;
                if (call.owner == ender || made[call.owner] <= accounted.getOrDefault(call.owner, 0)) {
                    counted.add(call);
                }
            }
            return counted;
        }

        /** What happened, for a replayed schedule that failed. */
        String trace() {
            StringBuilder out = new StringBuilder("model calls:\n");
            calls.forEach(call -> out.append("  owner ").append(call.owner).append(" step ").append(call.step)
                    .append(" tokens ").append(call.usage.promptTokens()).append(call.complete ? " complete" : "").append(call.failed ? " failed" : "")
                    .append('\n'));
            out.append("log (").append(committed).append(" committed):\n");
            log.forEach(entry -> out.append("  owner ").append(entry.owner()).append(' ').append(entry.event() != null
                    ? entry.event() : "step " + entry.step() + " " + entry.checkpoint()).append('\n'));
            return out.toString();
        }

        private static boolean readOnly(String tool) {
            return TOOLS.stream().anyMatch(definition -> definition.name().equals(tool) && definition.readOnly());
        }

        private static boolean terminal(StreamPayload event) {
            return event instanceof StreamPayload.ResponseDone || event instanceof StreamPayload.ResponseError;
        }

        private static long tokens(Usage usage) {
            return usage == null ? 0 : usage.promptTokens();
        }

        private void count(Fault fault) {
            drawn.merge(fault, 1, Integer::sum);
        }
    }
}
