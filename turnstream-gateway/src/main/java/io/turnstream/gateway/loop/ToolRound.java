package io.turnstream.gateway.loop;

import io.turnstream.gateway.provider.ErrorCodes;
import io.turnstream.gateway.provider.ToolCallRequest;
import io.turnstream.model.ErrorInfo;
import io.turnstream.model.StepItemIds;
import io.turnstream.model.ToolResult;
import io.turnstream.model.ToolState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One step's tool calls, from the step's end until each call has its output: a plain state machine. It is
 * fed what happens ({@link Input}: a result, the executor's start marker or approval ask, a cancel, a
 * handover, the time) and answers what the loop does ({@link Output}: statuses to show, outputs to publish,
 * how the wait ends). It has no threads, futures or clock, so a test can try any order of inputs at any
 * time without waiting (ToolRoundSimulationTest); {@link AgentLoop} feeds it from Kafka and the clock.
 *
 * <p>States: each call is {@code pending}, may be {@code awaiting_approval}, then {@code running} (also
 * shown just before a result that comes before the start marker, if the call ran), and ends
 * answered (its result) or unanswered (cancel, timeout); the round ends once, when every call is answered,
 * at the first cancel (calls left are aborted), at the deadline (calls left time out, the turn fails) or
 * at a handover (the next owner answers the calls left). Inputs after the end, duplicates and inputs of
 * calls not waited for change nothing.
 */
public final class ToolRound {

    /** What happens to the step's tool calls. */
    public sealed interface Input {
        /** The executor's result of a call. */
        record Result(ToolResult result) implements Input {
        }

        /** The executor started a call at {@code at} (epoch ms). */
        record Started(String callId, long at) implements Input {
        }

        /** The executor asks a person to approve a call. */
        record ApprovalAsked(String callId) implements Input {
        }

        /** The turn is cancelled; {@code reason} may be null. */
        record Cancel(String reason) implements Input {
        }

        /** The turn goes on at another gateway. */
        record Handover() implements Input {
        }

        /** The time is {@code now} (epoch ms). */
        record Tick(long now) implements Input {
        }

        /** The gateway failed while running the turn: the calls left end without a result, as {@code why} says. */
        record Fail(UnansweredCall why) implements Input {
        }
    }

    /** What the loop does. */
    public sealed interface Output {
        /** Show the call as waiting for a person's decision. */
        record AwaitingApproval(ToolCallRequest call) implements Output {
        }

        /** Show the call as running since {@code at}; null when the executor did not say (it is now). */
        record Running(ToolCallRequest call, Long at) implements Output {
        }

        /** Publish the call's result as its output item {@code outputId}. */
        record Answered(ToolCallRequest call, String outputId, ToolResult result) implements Output {
        }

        /** Publish an output item saying why the call has no result. */
        record Unanswered(ToolCallRequest call, String outputId, Long startedAt, UnansweredCall why) implements Output {
        }

        /** The wait is over; {@code error} is set when the turn fails ({@link Ending#TIMED_OUT}). */
        record Ended(Ending how, ErrorInfo error) implements Output {
        }
    }

    /** How the round ends. */
    public enum Ending {
        /** Every call has its output: the model is called with them. */
        ANSWERED,
        /** Cancelled: the calls left are aborted, the turn ends {@code aborted}. */
        CANCELLED,
        /** No result by the deadline: the calls left fail, and the turn with them. */
        TIMED_OUT,
        /** Another gateway takes the turn over and waits for the calls left. */
        HANDED_OVER,
        /** The gateway failed while running the turn: the calls left fail, and the turn with them. */
        FAILED
    }

    /** The executor's error codes of calls that ran and failed. */
    private static final Set<String> RAN_ERRORS = Set.of("TOOL_ERROR", "TOOL_CRASHED", "TIMEOUT", "OUTCOME_UNKNOWN");

    private final String runId;
    private final int step;
    private final List<ToolCallRequest> calls;
    private final Duration timeout;
    private final long deadline;
    /** The calls without an output yet, in call order. */
    private final Map<String, ToolCallRequest> waiting = new LinkedHashMap<>();
    private final Map<String, Long> startedAt = new HashMap<>();
    private final Set<String> askedApproval = new HashSet<>();
    private Ending ending;

    /**
     * @param answered ids of calls whose output is already published (by the gateway this turn was taken from)
     * @param now when the wait starts (epoch ms); the round times out {@code timeout} later
     */
    public ToolRound(String runId, int step, List<ToolCallRequest> calls, Collection<String> answered, long now,
                     Duration timeout) {
        this.runId = runId;
        this.step = step;
        this.calls = List.copyOf(calls);
        this.timeout = timeout;
        this.deadline = now + timeout.toMillis();
        calls.stream().filter(call -> !answered.contains(call.callId()))
                .forEach(call -> waiting.put(call.callId(), call));
    }

    /** The calls are shown {@code pending} already (as they streamed); the round may end at once (all answered). */
    public List<Output> start() {
        List<Output> outputs = new ArrayList<>();
        endIfAnswered(outputs);
        return outputs;
    }

    public List<Output> on(Input input) {
        List<Output> outputs = new ArrayList<>();
        if (ending != null) {
            return outputs;
        }
        if (input instanceof Input.Result result) {
            ToolCallRequest call = waiting.remove(result.result().callId());
            if (call != null) {
                // a call never skips running: a result that comes before the start marker shows it first
                if (!startedAt.containsKey(call.callId()) && ran(result.result())) {
                    outputs.add(new Output.Running(call, result.result().startedAt() > 0 ? result.result().startedAt() : null));
                }
                outputs.add(new Output.Answered(call, outputId(call), result.result()));
                endIfAnswered(outputs);
            }
        } else if (input instanceof Input.Started started) {
            ToolCallRequest call = waiting.get(started.callId());
            if (call != null && !startedAt.containsKey(call.callId())) {
                startedAt.put(call.callId(), started.at());
                outputs.add(new Output.Running(call, started.at()));
            }
        } else if (input instanceof Input.ApprovalAsked asked) {
            ToolCallRequest call = waiting.get(asked.callId());
            if (call != null && !startedAt.containsKey(call.callId()) && askedApproval.add(call.callId())) {
                outputs.add(new Output.AwaitingApproval(call));
            }
        } else if (input instanceof Input.Cancel cancel) {
            end(outputs, Ending.CANCELLED, UnansweredCall.aborted(cancel.reason()), null);
        } else if (input instanceof Input.Fail fail) {
            end(outputs, Ending.FAILED, fail.why(), fail.why().error());
        } else if (input instanceof Input.Handover) {
            ending = Ending.HANDED_OVER;
            outputs.add(new Output.Ended(Ending.HANDED_OVER, null));
        } else if (input instanceof Input.Tick tick && tick.now() >= deadline) {
            ToolCallRequest late = waiting.values().iterator().next();
            ErrorInfo error = ErrorInfo.of(ErrorCodes.TOOL_RESULT_TIMEOUT, "no result for tool call "
                    + late.callId() + " (" + late.name() + ") within " + timeout.toSeconds()
                    + " s; is the tool executor running?");
            end(outputs, Ending.TIMED_OUT, new UnansweredCall(ToolState.ERROR, error,
                    "timed out: no result within " + timeout.toSeconds() + " s"), error);
        }
        return outputs;
    }

    /** When the round times out (epoch ms): the loop ticks it then at the latest. */
    public long deadline() {
        return deadline;
    }

    /** How the round ended; null while it waits. */
    public Ending ending() {
        return ending;
    }

    /** Whether the executor ran the call: a refusal (denied, unknown tool, invalid arguments, doom loop, aborted) never did. */
    static boolean ran(ToolResult result) {
        return result.success() || (result.error() != null && RAN_ERRORS.contains(result.error().code()));
    }

    private void endIfAnswered(List<Output> outputs) {
        if (waiting.isEmpty()) {
            ending = Ending.ANSWERED;
            outputs.add(new Output.Ended(Ending.ANSWERED, null));
        }
    }

    private void end(List<Output> outputs, Ending how, UnansweredCall why, ErrorInfo error) {
        waiting.values().forEach(call -> outputs.add(new Output.Unanswered(call, outputId(call),
                startedAt.get(call.callId()), why)));
        waiting.clear();
        ending = how;
        outputs.add(new Output.Ended(how, error));
    }

    private String outputId(ToolCallRequest call) {
        return StepItemIds.output(runId, step, calls.indexOf(call));
    }
}
