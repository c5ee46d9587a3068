package io.turnstream.gateway.loop;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.gateway.provider.ErrorCodes;
import io.turnstream.gateway.provider.ToolCallRequest;
import io.turnstream.model.ErrorInfo;
import io.turnstream.model.ToolResult;
import io.turnstream.model.ToolState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Deterministic simulation of a step's wait for its tool calls ({@link ToolRound}): each schedule, drawn from
 * its seed, is a simulated executor and Kafka (results, start markers and approval asks, each maybe missing,
 * duplicated, for an unknown call, or out of order across topics), a simulated clock, and faults (a cancel
 * or a handover at any point, a timeout). After each schedule the invariants are checked; a failure names
 * its seed, and {@code -Dsimulation.seed=<seed> -Dsimulation.schedules=1} replays exactly that schedule.
 * {@code -Dsimulation.schedules=N} runs more.
 */
class ToolRoundSimulationTest {

    private static final int SCHEDULES = Integer.getInteger("simulation.schedules", 10_000);
    private static final Duration TIMEOUT = Duration.ofSeconds(1);
    private static final long START = 1_000;

    /** Faults and events a schedule may draw, counted over the run. */
    enum Fault {
        ALREADY_ANSWERED, APPROVAL_ASKED, STARTED, NO_RESULT, DUPLICATE, UNKNOWN_CALL, ACROSS_TOPICS_OUT_OF_ORDER,
        CANCEL, HANDOVER, TIMED_OUT, GATEWAY_ERROR
    }

    @Test
    void everyScheduleKeepsTheInvariants() {
        long base = Long.getLong("simulation.seed", new Random().nextLong());
        Map<Fault, Integer> drawn = new EnumMap<>(Fault.class);
        long started = System.nanoTime();
        for (int i = 0; i < SCHEDULES; i++) {
            long seed = base + i;
            try {
                run(seed, drawn);
            } catch (AssertionError | RuntimeException e) {
                throw new AssertionError("schedule " + seed + " broke an invariant; replay it with -Dsimulation.seed="
                        + seed + " -Dsimulation.schedules=1: " + e.getMessage(), e);
            }
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        System.out.printf("ToolRound simulation: %d schedules from seed %d in %.2f s (%.0f/s); faults drawn: %s%n",
                SCHEDULES, base, seconds, SCHEDULES / seconds, drawn);
    }

    /** One schedule: draws the calls and what happens to them, feeds the round, checks what it did. */
    private static void run(long seed, Map<Fault, Integer> drawn) {
        Random random = new Random(seed);
        int count = 1 + random.nextInt(4);
        List<ToolCallRequest> calls = new ArrayList<>();
        Set<String> answered = new HashSet<>();
        for (int i = 0; i < count; i++) {
            calls.add(new ToolCallRequest("run-s2-" + i, "call-" + i, "tool_" + i, "{}"));
            if (random.nextInt(8) == 0) {
                answered.add("call-" + i);
                count(drawn, Fault.ALREADY_ANSWERED);
            }
        }
        List<ToolRound.Input> inputs = new ArrayList<>();
        for (ToolCallRequest call : calls) {
            List<ToolRound.Input> executor = new ArrayList<>();
            if (random.nextInt(3) == 0) {
                executor.add(new ToolRound.Input.ApprovalAsked(call.callId()));
                count(drawn, Fault.APPROVAL_ASKED);
            }
            if (random.nextInt(5) != 0) {
                executor.add(new ToolRound.Input.Started(call.callId(), START + random.nextInt(500)));
                count(drawn, Fault.STARTED);
            }
            if (random.nextInt(7) != 0) {
                boolean success = random.nextBoolean();
                executor.add(new ToolRound.Input.Result(new ToolResult(call.callId(), "turn", call.name(), success,
                        TextNode.valueOf("out " + seed), null, START, START + 1)));
            } else {
                count(drawn, Fault.NO_RESULT);
            }
            if (!executor.isEmpty() && random.nextInt(5) == 0) {
                executor.add(executor.get(random.nextInt(executor.size())));
                count(drawn, Fault.DUPLICATE);
            }
            // each topic keeps its order, but results and control markers are on different topics
            if (executor.size() > 1 && random.nextInt(4) == 0) {
                Collections.swap(executor, 0, executor.size() - 1);
                count(drawn, Fault.ACROSS_TOPICS_OUT_OF_ORDER);
            }
            interleave(random, inputs, executor);
        }
        if (random.nextInt(10) == 0) {
            inputs.add(random.nextInt(inputs.size() + 1), new ToolRound.Input.Result(new ToolResult("call-unknown",
                    "turn", "x", true, TextNode.valueOf("?"), null, START, START)));
            count(drawn, Fault.UNKNOWN_CALL);
        }
        if (random.nextInt(6) == 0) {
            inputs.add(random.nextInt(inputs.size() + 1), new ToolRound.Input.Cancel(random.nextBoolean() ? "stop" : null));
            count(drawn, Fault.CANCEL);
        }
        if (random.nextInt(10) == 0) {
            inputs.add(random.nextInt(inputs.size() + 1), new ToolRound.Input.Handover());
            count(drawn, Fault.HANDOVER);
        }
        if (random.nextInt(20) == 0) {
            inputs.add(random.nextInt(inputs.size() + 1), new ToolRound.Input.Fail(new UnansweredCall(ToolState.ABORTED,
                    ErrorInfo.of(ErrorCodes.INTERNAL, "a bug"), "aborted: the gateway failed")));
            count(drawn, Fault.GATEWAY_ERROR);
        }
        // the clock moves between inputs, sometimes past the deadline
        long now = START;
        List<ToolRound.Input> timed = new ArrayList<>();
        for (ToolRound.Input input : inputs) {
            now += random.nextInt(250);
            timed.add(new ToolRound.Input.Tick(now));
            timed.add(input);
        }
        // the loop ticks the round at its deadline when nothing else comes
        timed.add(new ToolRound.Input.Tick(START + TIMEOUT.toMillis()));

        ToolRound round = new ToolRound("run", 2, calls, answered, START, TIMEOUT);
        List<ToolRound.Output> outputs = new ArrayList<>(round.start());
        List<ToolRound.Input> fed = new ArrayList<>();
        for (ToolRound.Input input : timed) {
            if (round.ending() != null) {
                assertThat(round.on(input)).as("nothing follows the end").isEmpty();
                continue;
            }
            fed.add(input);
            outputs.addAll(round.on(input));
        }
        if (round.ending() == ToolRound.Ending.TIMED_OUT) {
            count(drawn, Fault.TIMED_OUT);
        }
        check(calls, answered, fed, outputs, round);
    }

    /** Inserts the executor's inputs into the schedule at random places, keeping their order. */
    private static void interleave(Random random, List<ToolRound.Input> schedule, List<ToolRound.Input> executor) {
        int at = 0;
        for (ToolRound.Input input : executor) {
            at = at + random.nextInt(schedule.size() - at + 1);
            schedule.add(at, input);
            at++;
        }
    }

    private static void check(List<ToolCallRequest> calls, Set<String> answered, List<ToolRound.Input> fed,
                              List<ToolRound.Output> outputs, ToolRound round) {
        // exactly one end, the last output
        List<ToolRound.Output.Ended> ends = outputs.stream().filter(ToolRound.Output.Ended.class::isInstance)
                .map(ToolRound.Output.Ended.class::cast).toList();
        assertThat(ends).as("exactly one end").hasSize(1);
        assertThat(outputs.get(outputs.size() - 1)).isEqualTo(ends.get(0));
        ToolRound.Ending ending = ends.get(0).how();
        assertThat(round.ending()).isEqualTo(ending);

        Map<String, ToolResult> firstResult = new HashMap<>();
        Map<String, Long> firstStart = new HashMap<>();
        boolean cancelled = false;
        boolean failed = false;
        long lastTick = START;
        for (ToolRound.Input input : fed) {
            if (input instanceof ToolRound.Input.Result result) {
                firstResult.putIfAbsent(result.result().callId(), result.result());
            } else if (input instanceof ToolRound.Input.Started start && !firstResult.containsKey(start.callId())) {
                firstStart.putIfAbsent(start.callId(), start.at());
            } else if (input instanceof ToolRound.Input.Cancel) {
                cancelled = true;
            } else if (input instanceof ToolRound.Input.Fail) {
                failed = true;
            } else if (input instanceof ToolRound.Input.Tick tick) {
                lastTick = tick.now();
            }
        }
        switch (ending) {
            case CANCELLED -> assertThat(cancelled).as("only a cancel cancels").isTrue();
            case TIMED_OUT -> {
                assertThat(lastTick).as("never before the deadline").isGreaterThanOrEqualTo(round.deadline());
                assertThat(ends.get(0).error().code()).isEqualTo(ErrorCodes.TOOL_RESULT_TIMEOUT);
            }
            case HANDED_OVER -> assertThat(fed.get(fed.size() - 1)).isInstanceOf(ToolRound.Input.Handover.class);
            case FAILED -> {
                assertThat(failed).as("only the gateway's failure fails the round").isTrue();
                assertThat(ends.get(0).error().code()).isEqualTo(ErrorCodes.INTERNAL);
            }
            case ANSWERED -> assertThat(calls).allMatch(call -> answered.contains(call.callId())
                    || firstResult.containsKey(call.callId()));
        }

        Set<String> outputIds = new HashSet<>();
        for (int index = 0; index < calls.size(); index++) {
            ToolCallRequest call = calls.get(index);
            List<ToolRound.Output> ofCall = outputs.stream().filter(output -> call.equals(callOf(output))).toList();
            if (answered.contains(call.callId())) {
                assertThat(ofCall).as("a call answered before the takeover is not waited for").isEmpty();
                continue;
            }
            List<ToolRound.Output> answers = ofCall.stream().filter(output -> output instanceof ToolRound.Output.Answered
                    || output instanceof ToolRound.Output.Unanswered).toList();
            if (ending == ToolRound.Ending.HANDED_OVER) {
                assertThat(answers).as("at most one output before a handover").hasSizeLessThanOrEqualTo(1);
            } else {
                assertThat(answers).as("every call answered by exactly one output").hasSize(1);
            }
            if (!answers.isEmpty()) {
                ToolRound.Output answer = answers.get(0);
                assertThat(ofCall.get(ofCall.size() - 1)).as("nothing of a call after its output").isEqualTo(answer);
                String id = answer instanceof ToolRound.Output.Answered a ? a.outputId()
                        : ((ToolRound.Output.Unanswered) answer).outputId();
                assertThat(id).isEqualTo("run-s2-out" + index);
                assertThat(outputIds.add(id)).isTrue();
                if (answer instanceof ToolRound.Output.Answered a) {
                    assertThat(a.result()).as("the first result is the answer").isEqualTo(firstResult.get(call.callId()));
                } else {
                    assertThat(((ToolRound.Output.Unanswered) answer).startedAt()).isEqualTo(firstStart.get(call.callId()));
                }
            }
            long running = ofCall.stream().filter(ToolRound.Output.Running.class::isInstance).count();
            long approval = ofCall.stream().filter(ToolRound.Output.AwaitingApproval.class::isInstance).count();
            assertThat(running).as("running at most once").isLessThanOrEqualTo(1);
            assertThat(approval).as("awaiting approval at most once").isLessThanOrEqualTo(1);
            int runningAt = indexOf(ofCall, ToolRound.Output.Running.class);
            if (!answers.isEmpty() && answers.get(0) instanceof ToolRound.Output.Answered a && ToolRound.ran(a.result())) {
                assertThat(runningAt).as("a call that ran never skips running").isNotNegative();
            }
            int approvalAt = indexOf(ofCall, ToolRound.Output.AwaitingApproval.class);
            if (runningAt >= 0 && approvalAt >= 0) {
                assertThat(approvalAt).as("never awaiting approval once running").isLessThan(runningAt);
            }
        }
    }

    private static int indexOf(List<ToolRound.Output> outputs, Class<?> type) {
        for (int i = 0; i < outputs.size(); i++) {
            if (type.isInstance(outputs.get(i))) {
                return i;
            }
        }
        return -1;
    }

    private static ToolCallRequest callOf(ToolRound.Output output) {
        if (output instanceof ToolRound.Output.AwaitingApproval o) {
            return o.call();
        } else if (output instanceof ToolRound.Output.Running o) {
            return o.call();
        } else if (output instanceof ToolRound.Output.Answered o) {
            return o.call();
        } else if (output instanceof ToolRound.Output.Unanswered o) {
            return o.call();
        }
        return null;
    }

    private static void count(Map<Fault, Integer> drawn, Fault fault) {
        drawn.merge(fault, 1, Integer::sum);
    }
}
