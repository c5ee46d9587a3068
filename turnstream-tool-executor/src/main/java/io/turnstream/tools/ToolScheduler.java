package io.turnstream.tools;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.model.ControlMessage;
import io.turnstream.model.StepItemIds;
import io.turnstream.model.ToolCall;
import io.turnstream.model.ToolResult;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * Runs tool calls per turn as Claude Code's streaming tool executor does. A call starts as soon as it
 * arrives if it can: concurrency-safe calls run in parallel (up to {@code maxConcurrency} per turn), an
 * unsafe call waits until the turn's running calls are done and then runs alone, and calls start in
 * arrival order (a call never overtakes an earlier queued one). Turns are independent of each other.
 * Every call gets exactly one result through {@link Outcomes#resolved}: its output, or an error for an
 * unknown tool, invalid arguments, a doom loop, a timeout, a crash, a cancelled turn or a failed sibling (one
 * of the same model step, running, queued or arriving later: {@link Turn#failedSteps});
 * only {@link #dropPartitions}/{@link #dropAll} end calls without a result (their record is redelivered).
 * No call starts before the cancel listener has read {@code llm.control} up to the call's {@link ControlFence}
 * ({@link #controlRead}), so a cancel written before the call was read aborts it unrun, however late it is read.
 */
final class ToolScheduler implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ToolScheduler.class);

    /** Where the scheduler's decisions go; called under the scheduler's lock, so implementations only hand over. */
    interface Outcomes {

        /** The one result of a call. */
        void resolved(ToolCall call, RecordPosition position, ToolResult result);

        /** A non-idempotent call is next: record it durably as started, then call {@link #launch}. */
        void startRequested(ScheduledCall call);

        /** A call started running. */
        default void launched(ScheduledCall call, long startedAt) {
        }

        /** A call waits for a person's approval (see {@link ToolApprovals}). */
        default void approvalRequested(ScheduledCall call) {
        }

        /** No decision came within the approval timeout: the call is denied with this reason. */
        default void approvalExpired(ScheduledCall call, String reason) {
        }
    }

    private enum State { AWAITING_APPROVAL, QUEUED, STARTING, RUNNING }

    /** One call accepted for running, from queued until its result. */
    static final class ScheduledCall {
        final ToolCall call;
        final RecordPosition position;
        final Tool tool;
        final JsonNode arguments;
        private State state = State.QUEUED;
        private volatile boolean resolved;
        private volatile boolean cancelled;
        private long startedAt;
        private Future<?> work;
        private ScheduledFuture<?> timeout;
        /** Why it waits for approval ({@link ControlMessage#ASK_POLICY} or {@link ControlMessage#ASK_DOOM_LOOP}); null when it does not. */
        private String askedBecause;
        /** How far {@code llm.control} must be read before the call may start; null once it was. */
        private ControlFence fence;

        private ScheduledCall(ToolCall call, RecordPosition position, Tool tool, JsonNode arguments, ControlFence fence) {
            this.call = call;
            this.position = position;
            this.tool = tool;
            this.arguments = arguments;
            this.fence = fence;
        }

        private boolean active() {
            return state == State.STARTING || state == State.RUNNING;
        }

        String askedBecause() {
            return askedBecause;
        }

        /** Answered, aborted or dropped: it will not be launched. */
        boolean resolved() {
            return resolved;
        }
    }

    /** A turn's calls that have no result yet, in arrival order, its doom-loop count and its failed steps. */
    private static final class Turn {
        /** A turn's calls all come from one partition: they are keyed by turn id. */
        final TopicPartition partition;
        final List<ScheduledCall> calls = new ArrayList<>();
        /**
         * The model steps ({@link #step}) in which a call crashed (or failed unrecoverably) while sibling abort is
         * on: a call of such a step that arrives later is aborted as its running and queued siblings were. Kept as
         * long as the turn (an idle turn is forgotten after the turn memory) and dropped with its partition, with
         * the results it was learnt from: a rewind or a new owner runs such a call as it would any other.
         */
        final Set<String> failedSteps = new HashSet<>();
        long lastActivity;
        String lastToolName;
        JsonNode lastArguments;
        int repeats;

        Turn(TopicPartition partition) {
            this.partition = partition;
        }

        /** How many times in a row, this one included, the turn has called this tool with these arguments. */
        int repeats(ToolCall call) {
            boolean same = Objects.equals(call.toolName(), lastToolName) && Objects.equals(call.arguments(), lastArguments);
            repeats = same ? repeats + 1 : 1;
            lastToolName = call.toolName();
            lastArguments = call.arguments();
            return repeats;
        }

        boolean canStart(boolean safe, int maxConcurrency) {
            int active = 0;
            for (ScheduledCall call : calls) {
                if (call.active()) {
                    if (!call.tool.concurrencySafe()) {
                        return false;
                    }
                    active++;
                }
            }
            return active < maxConcurrency && (safe || active == 0);
        }
    }

    private final ToolRegistry registry;
    private final ToolExecutorConfig config;
    private final Workspaces workspaces;
    private final Outcomes outcomes;
    private final Clock clock;
    private final ExecutorService workers = Executors.newCachedThreadPool(daemonThreads("turnstream-tool-"));
    private final ScheduledThreadPoolExecutor timers = new ScheduledThreadPoolExecutor(1, daemonThreads("turnstream-tool-timer-"));
    private final Map<String, Turn> turns = new HashMap<>();
    private final Map<String, Long> cancelledTurns = new HashMap<>();
    private final Map<CallKey, ScheduledCall> unresolved = new HashMap<>();
    /** Where the cancel listener reads {@code llm.control}: every record before these positions reached the scheduler. */
    private Map<TopicPartition, Long> controlRead = Map.of();
    private int running;

    /** @param workspace the root; each tenant's calls run in their own directory below it (see {@link Workspaces}) */
    ToolScheduler(ToolRegistry registry, ToolExecutorConfig config, Workspace workspace, Outcomes outcomes, Clock clock) {
        this.registry = registry;
        this.clock = clock;
        this.config = config;
        this.workspaces = new Workspaces(workspace, config.workspacePerThread());
        this.outcomes = outcomes;
        timers.setRemoveOnCancelPolicy(true);
    }

    /**
     * Accepts a call: answers it at once when it cannot run, otherwise queues it and starts what can start.
     *
     * @param fence {@code llm.control}'s ends taken after the call was read: it starts only once the listener read past them
     */
    synchronized void submit(ToolCall call, RecordPosition position, ControlFence fence) {
        long now = clock.millis();
        Turn turn = turns.computeIfAbsent(call.turnId(), id -> new Turn(position.partition()));
        turn.lastActivity = now;
        int repeats = turn.repeats(call);
        Optional<Tool> tool = registry.find(call.toolName());
        int heldByTenant = heldBy(call.tenantId());
        if (cancelledTurns.containsKey(call.turnId())) {
            refuse(call, position, ToolErrors.ABORTED, ToolResults.ABORTED_BY_USER);
        } else if (step(call).filter(turn.failedSteps::contains).isPresent()) {
            refuse(call, position, ToolErrors.ABORTED, ToolResults.ABORTED_BY_SIBLING);
        } else if (call.tenantId() != null && heldByTenant >= config.tenantMaxInFlight()) {
            refuse(call, position, ToolErrors.QUOTA_EXCEEDED, "Quota exceeded: not executed, tenant "
                    + call.tenantId() + " already has " + heldByTenant
                    + " tool calls in flight on this executor, its share (" + ToolExecutorConfig.PREFIX
                    + "tenant-max-in-flight); the rest are kept for other tenants. Retry once some have finished");
        } else if (tool.isEmpty()) {
            refuse(call, position, ToolErrors.TOOL_NOT_FOUND, "Tool not found: " + call.toolName());
        } else if (config.approvals().policyFor(call.toolName()) == ToolApprovals.Policy.DENY) {
            refuse(call, position, ToolErrors.DENIED, "Not executed: the tool " + call.toolName()
                    + " is denied by this deployment's approval policy");
        } else if (repeats >= config.doomLoopThreshold() && !config.approvals().enabled()) {
            refuse(call, position, ToolErrors.DOOM_LOOP, "Not executed: this is call " + repeats + " in a row of "
                    + call.toolName() + " with identical arguments in this turn (doom-loop guard); the earlier calls' "
                    + "results stand, so change the arguments or try another approach");
        } else {
            ToolRegistry.ArgumentCheck check = registry.check(tool.get(), call.arguments());
            if (!check.ok()) {
                refuse(call, position, ToolErrors.INVALID_ARGUMENTS, "Invalid arguments for " + call.toolName() + ": " + check.problem());
            } else {
                ScheduledCall scheduled = new ScheduledCall(call, position, tool.get(), check.arguments(),
                        fence.reachedBy(controlRead) ? null : fence);
                turn.calls.add(scheduled);
                unresolved.put(CallKey.of(call), scheduled);
                if (config.approvals().policyFor(call.toolName()) == ToolApprovals.Policy.ASK) {
                    awaitApproval(scheduled, ControlMessage.ASK_POLICY);
                } else if (repeats >= config.doomLoopThreshold()) {
                    awaitApproval(scheduled, ControlMessage.ASK_DOOM_LOOP);
                } else {
                    startWhatCan(turn);
                }
            }
        }
    }

    /** Starts a call whose start was requested (after its started marker is durable), unless it was resolved meanwhile. */
    synchronized void launch(ScheduledCall call) {
        if (call.resolved || call.state != State.STARTING) {
            return;
        }
        call.state = State.RUNNING;
        call.startedAt = clock.millis();
        running++;
        Duration timeout = config.timeoutFor(call.tool);
        call.work = workers.submit(() -> run(call));
        outcomes.launched(call, call.startedAt);
        call.timeout = timers.schedule(() -> timedOut(call, timeout), timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Holds a call until a decision arrives ({@link #decide}) or the approval timeout denies it. */
    private void awaitApproval(ScheduledCall call, String because) {
        call.state = State.AWAITING_APPROVAL;
        call.askedBecause = because;
        Duration wait = config.approvals().timeout();
        call.timeout = timers.schedule(() -> approvalExpired(call, "no approval within " + wait.toSeconds() + " s"),
                wait.toMillis(), TimeUnit.MILLISECONDS);
        outcomes.approvalRequested(call);
    }

    /** Nobody decided in time: the call is denied, and the denial is announced as the decision that stands. */
    private synchronized void approvalExpired(ScheduledCall call, String reason) {
        if (call.state == State.AWAITING_APPROVAL && unresolved.get(CallKey.of(call.call)) == call) {
            outcomes.approvalExpired(call, reason);
            decide(call.call.turnId(), call.call.callId(), false, reason);
        }
    }

    /**
     * A decision on a call awaiting approval: approved, it queues to run; denied, it is answered with
     * {@code DENIED}. Only the first decision counts; later ones, and decisions on calls that do not
     * wait (unknown, already decided, answered, or of another turn with the same call id), change nothing.
     */
    synchronized void decide(String turnId, String callId, boolean approved, String reason) {
        ScheduledCall call = unresolved.get(new CallKey(turnId, callId));
        if (call == null || call.state != State.AWAITING_APPROVAL) {
            return;
        }
        if (approved) {
            call.timeout.cancel(false);
            call.timeout = null;
            call.state = State.QUEUED;
            startWhatCan(turns.get(call.call.turnId()));
        } else {
            String why = reason == null || reason.isBlank() ? "" : ": " + reason;
            if (resolve(call, ToolResults.refusal(call.call, ToolErrors.DENIED, "Not executed: the call was denied" + why,
                    clock.millis()))) {
                startWhatCan(turns.get(call.call.turnId()));
            }
        }
    }

    /** A user cancelled the turn: its calls, queued or running, and any that arrive later are aborted. */
    synchronized void cancelTurn(String turnId) {
        cancelledTurns.put(turnId, clock.millis());
        Turn turn = turns.get(turnId);
        if (turn != null) {
            abortAll(turn, ToolResults.ABORTED_BY_USER);
        }
    }

    /**
     * The cancel listener handed over every {@code llm.control} record before these positions (cancels and decisions
     * applied): calls whose fence they pass may start.
     */
    synchronized void controlRead(Map<TopicPartition, Long> positions) {
        controlRead = Map.copyOf(positions);
        for (Turn turn : List.copyOf(turns.values())) {
            boolean passed = false;
            for (ScheduledCall call : turn.calls) {
                if (call.fence != null && call.fence.reachedBy(controlRead)) {
                    call.fence = null;
                    passed = true;
                }
            }
            if (passed) {
                startWhatCan(turn);
            }
        }
    }

    /** Stops the calls read from these partitions without a result: another owner (or a rewind) reads them again. */
    synchronized void dropPartitions(Collection<TopicPartition> partitions) {
        drop(partitions::contains);
    }

    synchronized void dropAll() {
        drop(partition -> true);
    }

    /** Calls accepted and not yet answered: queued, starting or running. */
    synchronized int unresolved() {
        return unresolved.size();
    }

    /**
     * Calls of this tenant accepted and not yet answered. Calls of no tenant have no share: they come from a
     * gateway without API keys, which serves one party, so there is no other tenant to keep slots for.
     */
    private int heldBy(String tenantId) {
        if (tenantId == null) {
            return 0;
        }
        int held = 0;
        for (ScheduledCall scheduled : unresolved.values()) {
            if (tenantId.equals(scheduled.call.tenantId())) {
                held++;
            }
        }
        return held;
    }

    synchronized int running() {
        return running;
    }

    synchronized int queued() {
        return unresolved.size() - running;
    }

    /** Forgets idle turns and old cancellations, so no state lives forever. */
    synchronized void sweep() {
        long horizon = clock.millis() - config.turnMemory().toMillis();
        turns.values().removeIf(turn -> turn.calls.isEmpty() && turn.lastActivity < horizon);
        cancelledTurns.values().removeIf(at -> at < horizon);
    }

    @Override
    public void close() {
        dropAll();
        workers.shutdownNow();
        timers.shutdownNow();
    }

    private void startWhatCan(Turn turn) {
        for (ScheduledCall call : turn.calls) {
            if (call.state != State.QUEUED) {
                continue;
            }
            // a call waiting for the listener holds the later ones back too: calls start in arrival order
            if (call.fence != null || !turn.canStart(call.tool.concurrencySafe(), config.maxConcurrency())) {
                break;
            }
            call.state = State.STARTING;
            if (call.tool.idempotent()) {
                launch(call);
            } else {
                outcomes.startRequested(call);
            }
        }
    }

    private void run(ScheduledCall call) {
        MDC.put("turnId", call.call.turnId());
        try {
            ToolContext context = new ToolContext(call.call.callId(), call.call.turnId(), workspaces.of(call.call),
                    config.limits(), config.writeQuota(), () -> call.cancelled);
            JsonNode output = call.tool.execute(call.arguments, context);
            finish(call, ToolResults.success(call.call, config.limits().cap(output), call.startedAt, clock.millis()), false);
        } catch (ToolException e) {
            finish(call, ToolResults.failure(call.call, e.code(), e.getMessage(), call.startedAt, clock.millis()), e.unrecoverable());
        } catch (IOException e) {
            finish(call, ToolResults.failure(call.call, ToolErrors.TOOL_ERROR,
                    e.getClass().getSimpleName() + ": " + e.getMessage(), call.startedAt, clock.millis()), false);
        } catch (Throwable e) {
            // after an abort or a timeout the tool ends by exception: the call is resolved already and finish ignores it
            if (!call.cancelled) {
                LOG.warn("tool {} crashed on call {}", call.tool.name(), call.call.callId(), e);
            }
            finish(call, ToolResults.failure(call.call, ToolErrors.TOOL_CRASHED,
                    "Tool " + call.tool.name() + " crashed: " + e, call.startedAt, clock.millis()), true);
        } finally {
            MDC.remove("turnId");
        }
    }

    private synchronized void finish(ScheduledCall call, ToolResult result, boolean unrecoverable) {
        if (!resolve(call, result)) {
            return;
        }
        Turn turn = turns.get(call.call.turnId());
        if (unrecoverable && config.abortSiblingsOnFailure()) {
            step(call.call).ifPresent(turn.failedSteps::add);
            abortAll(turn, ToolResults.ABORTED_BY_SIBLING);
        }
        startWhatCan(turn);
    }

    private synchronized void timedOut(ScheduledCall call, Duration timeout) {
        if (resolve(call, ToolResults.failure(call.call, ToolErrors.TIMEOUT, "Tool " + call.tool.name()
                + " timed out after " + timeout.toMillis() + " ms and was stopped", call.startedAt, clock.millis()))) {
            stop(call);
            startWhatCan(turns.get(call.call.turnId()));
        }
    }

    /**
     * The model step a call was made in: its item id up to the item's number, {@code <runId>-s<step>} of the
     * gateway's step items ({@code <runId>-s<step>-<n>}); empty for an item id of another form, whose step is unknown.
     */
    static Optional<String> step(ToolCall call) {
        return StepItemIds.parse(call.itemId()).filter(id -> id.kind() == StepItemIds.Kind.ITEM)
                .map(StepItemIds.Parsed::stepPrefix);
    }

    private void abortAll(Turn turn, String message) {
        long now = clock.millis();
        for (ScheduledCall call : List.copyOf(turn.calls)) {
            if (resolve(call, ToolResults.failure(call.call, ToolErrors.ABORTED, message,
                    call.startedAt > 0 ? call.startedAt : now, now))) {
                stop(call);
            }
        }
    }

    private void refuse(ToolCall call, RecordPosition position, String code, String message) {
        outcomes.resolved(call, position, ToolResults.refusal(call, code, message, clock.millis()));
    }

    /** Marks a call answered and hands its result over; false when it was answered already. */
    private boolean resolve(ScheduledCall call, ToolResult result) {
        if (!forget(call)) {
            return false;
        }
        outcomes.resolved(call.call, call.position, result);
        return true;
    }

    private boolean forget(ScheduledCall call) {
        if (call.resolved) {
            return false;
        }
        call.resolved = true;
        if (call.state == State.RUNNING) {
            running--;
        }
        if (call.timeout != null) {
            call.timeout.cancel(false);
        }
        unresolved.remove(CallKey.of(call.call));
        Turn turn = turns.get(call.call.turnId());
        if (turn != null) {
            turn.calls.remove(call);
        }
        return true;
    }

    /** Tells a tool to stop: its context reports cancellation and its thread is interrupted. */
    private static void stop(ScheduledCall call) {
        call.cancelled = true;
        if (call.work != null) {
            call.work.cancel(true);
        }
    }

    private void drop(Predicate<TopicPartition> which) {
        for (Iterator<Turn> it = turns.values().iterator(); it.hasNext(); ) {
            Turn turn = it.next();
            if (which.test(turn.partition)) {
                for (ScheduledCall call : List.copyOf(turn.calls)) {
                    forget(call);
                    stop(call);
                }
                it.remove();
            }
        }
    }

    private static ThreadFactory daemonThreads(String prefix) {
        AtomicInteger count = new AtomicInteger();
        return runnable -> {
            Thread thread = new Thread(runnable, prefix + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }
}
