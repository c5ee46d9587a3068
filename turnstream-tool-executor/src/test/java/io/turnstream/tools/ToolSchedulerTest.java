package io.turnstream.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.model.ControlMessage;
import io.turnstream.model.ToolCall;
import io.turnstream.model.ToolResult;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ToolSchedulerTest {

    private final GatedTools tools = new GatedTools();
    private final List<String> events = tools.events;
    private final ScriptedTool read = tools.read;
    private final ScriptedTool write = tools.write;

    private void open(String... names) {
        tools.open(names);
    }

    private static String named(String name) {
        return GatedTools.named(name);
    }

    @Test
    void resultsAreStampedWithTheExecutorsClock() {
        Instant fixed = Instant.parse("2026-01-02T03:04:05Z");
        try (SchedulerHarness harness = new SchedulerHarness(Clock.fixed(fixed, ZoneOffset.UTC), ToolRegistry.of(List.of(read)))) {
            String call = harness.call("turn-1", "read", named("a"));
            open("a");

            ToolResult result = harness.awaitResult(call);
            assertThat(result.startedAt()).isEqualTo(fixed.toEpochMilli());
            assertThat(result.completedAt()).isEqualTo(fixed.toEpochMilli());
        }
    }

    @Test
    void concurrencySafeCallsOfATurnRunAtTheSameTime() {
        CyclicBarrier allThree = new CyclicBarrier(3);
        ScriptedTool meet = ScriptedTool.safe("meet", (args, context) -> {
            allThree.await(20, TimeUnit.SECONDS); // only passes when the three calls run together
            return TextNode.valueOf("met");
        });
        try (SchedulerHarness harness = new SchedulerHarness(ToolRegistry.of(List.of(meet)))) {
            List<String> calls = List.of(harness.call("turn-1", "meet", named("a")), harness.call("turn-1", "meet", named("b")),
                    harness.call("turn-1", "meet", named("c")));

            for (String call : calls) {
                assertThat(harness.awaitResult(call).success()).isTrue();
                assertThat(harness.output(call)).isEqualTo("met");
            }
        }
    }

    @Test
    void noMoreThanMaxConcurrencyCallsOfATurnRunAtOnce() {
        try (SchedulerHarness harness = new SchedulerHarness(ToolRegistry.of(List.of(read)), "max-concurrency", "2")) {
            List<String> calls = List.of(harness.call("turn-1", "read", named("a")), harness.call("turn-1", "read", named("b")),
                    harness.call("turn-1", "read", named("c")));

            assertThat(harness.scheduler.running()).isEqualTo(2);
            assertThat(harness.scheduler.queued()).isEqualTo(1);

            open("a", "b", "c");
            calls.forEach(call -> assertThat(harness.awaitResult(call).success()).isTrue());
        }
    }

    @Test
    void anUnsafeCallWaitsForTheRunningCallsThenRunsAloneAndLaterCallsWaitForIt() {
        try (SchedulerHarness harness = new SchedulerHarness(ToolRegistry.of(List.of(read, write)))) {
            open("r2");
            String r1 = harness.call("turn-1", "read", named("r1"));
            String w = harness.call("turn-1", "write", named("w"));
            String r2 = harness.call("turn-1", "read", named("r2"));
            assertThat(harness.scheduler.running()).as("only r1 runs; w waits, r2 does not overtake w").isEqualTo(1);

            open("r1");
            harness.awaitResult(r1);
            await().until(() -> events.contains("start w"));
            assertThat(harness.scheduler.running()).as("w runs alone").isEqualTo(1);
            assertThat(harness.answered(r2)).isFalse();

            open("w");
            harness.awaitResult(w);
            harness.awaitResult(r2);
            assertThat(events).containsExactly("start r1", "end r1", "start w", "end w", "start r2", "end r2");
        }
    }

    @Test
    void aTurnWaitingForItsUnsafeCallDoesNotHoldUpOtherTurns() {
        try (SchedulerHarness harness = new SchedulerHarness(ToolRegistry.of(List.of(read, write)))) {
            open("a2", "b");
            String a1 = harness.call("turn-a", "write", named("a1"));
            String a2 = harness.call("turn-a", "write", named("a2"));
            String b = harness.call("turn-b", "write", named("b"));

            assertThat(harness.awaitResult(b).success()).isTrue();
            assertThat(harness.answered(a2)).isFalse();
            assertThat(events).doesNotContain("start a2");

            open("a1");
            assertThat(harness.awaitResult(a1).success()).isTrue();
            assertThat(harness.awaitResult(a2).success()).isTrue();
            assertThat(events.indexOf("start a2")).isGreaterThan(events.indexOf("end a1"));
        }
    }

    @Test
    void aNonIdempotentCallStartsOnlyWhenLaunchedAfterItsStartedMarker() {
        try (SchedulerHarness harness = new SchedulerHarness(ToolRegistry.of(List.of(read, write))).holdingStarts()) {
            open("w", "r");
            String w = harness.call("turn-1", "write", named("w"));
            String r = harness.call("turn-1", "read", named("r"));

            assertThat(harness.startRequests).hasSize(1);
            assertThat(harness.scheduler.running()).isZero();
            assertThat(events).isEmpty();

            harness.scheduler.launch(harness.startRequests.get(0));
            assertThat(harness.awaitResult(w).success()).isTrue();
            assertThat(harness.awaitResult(r).success()).isTrue();
            assertThat(events).containsExactly("start w", "end w", "start r", "end r");
        }
    }

    @Test
    void aCallPastItsTimeoutIsAnsweredWithATimeoutErrorAndInterrupted() {
        CountDownLatch interrupted = new CountDownLatch(1);
        ScriptedTool hang = ScriptedTool.safe("hang", (args, context) -> {
            try {
                new CountDownLatch(1).await();
                return TextNode.valueOf("never");
            } finally {
                interrupted.countDown();
            }
        }).withTimeout(Duration.ofHours(1));
        try (SchedulerHarness harness = new SchedulerHarness(ToolRegistry.of(List.of(hang)), "max-timeout-ms", "300")) {
            ToolResult result = harness.awaitResult(harness.call("turn-1", "hang", "{}"));

            assertThat(result.success()).isFalse();
            assertThat(result.error().code()).isEqualTo(ToolErrors.TIMEOUT);
            assertThat(result.error().message()).isEqualTo("Tool hang timed out after 300 ms and was stopped");
            await().until(() -> interrupted.getCount() == 0);
        }
    }

    @Test
    void aToolTimeoutCanBeConfiguredPerTool() {
        ScriptedTool hang = ScriptedTool.safe("hang", (args, context) -> {
            new CountDownLatch(1).await();
            return TextNode.valueOf("never");
        });
        try (SchedulerHarness harness = new SchedulerHarness(ToolRegistry.of(List.of(hang)), "timeout-ms.hang", "150")) {
            assertThat(harness.awaitResult(harness.call("turn-1", "hang", "{}")).error().message()).contains("after 150 ms");
        }
    }

    @Test
    void cancellingATurnAbortsItsRunningAndQueuedCallsAndLaterOnesButNoOtherTurn() {
        try (SchedulerHarness harness = new SchedulerHarness(ToolRegistry.of(List.of(read, write)))) {
            String c1 = harness.call("turn-1", "read", named("c1"));
            String c2 = harness.call("turn-1", "read", named("c2"));
            String c3 = harness.call("turn-1", "write", named("c3"));
            String other = harness.call("turn-2", "read", named("other"));
            await().until(() -> events.containsAll(List.of("start c1", "start c2", "start other")));

            harness.scheduler.cancelTurn("turn-1");
            String late = harness.call("turn-1", "read", named("late"));

            for (String call : List.of(c1, c2, c3, late)) {
                ToolResult result = harness.awaitResult(call);
                assertThat(result.success()).isFalse();
                assertThat(result.error().code()).isEqualTo(ToolErrors.ABORTED);
                assertThat(harness.output(call)).isEqualTo("Tool execution was aborted: user interrupted");
            }
            await().until(() -> events.containsAll(List.of("interrupted c1", "interrupted c2")));
            assertThat(events).doesNotContain("start c3", "start late");

            assertThat(harness.answered(other)).isFalse();
            open("other");
            assertThat(harness.awaitResult(other).success()).isTrue();
        }
    }

    @Test
    void aCallReadAfterItsTurnsCancelWasWrittenIsAbortedUnrunThoughTheListenerReadsTheCancelOnlyAfterIt() {
        try (SchedulerHarness harness = new SchedulerHarness(ToolRegistry.of(List.of(read, write)))) {
            // the user cancels the turn; the gateway, not having read the cancel yet, releases the step's calls
            harness.control.cancel("turn-1");
            String w = harness.call("turn-1", "write", named("w"));
            String r = harness.call("turn-1", "read", named("r"));
            open("w", "r");

            assertThat(harness.startRequests).as("no started mark for the write: the cancel before it is not read yet").isEmpty();
            assertThat(harness.scheduler.running()).as("the read does not run either").isZero();

            harness.control.read();

            for (String call : List.of(w, r)) {
                ToolResult result = harness.awaitResult(call);
                assertThat(result.error().code()).isEqualTo(ToolErrors.ABORTED);
                assertThat(harness.output(call)).isEqualTo("Tool execution was aborted: user interrupted");
            }
            assertThat(events).as("neither call ran").isEmpty();
        }
    }

    @Test
    void aCallWaitsOnlyForTheControlRecordsWrittenBeforeItWasReadAndStartsAtOnceWhenThereAreNone() {
        try (SchedulerHarness harness = new SchedulerHarness(ToolRegistry.of(List.of(read, write)))) {
            String quiet = harness.call("turn-1", "read", named("quiet"));
            assertThat(harness.scheduler.running()).as("nothing unread on llm.control: it starts at once").isEqualTo(1);

            harness.control.other();
            String waits = harness.call("turn-2", "write", named("waits"));
            assertThat(harness.startRequests).as("a record written before the call is not read yet").isEmpty();

            harness.control.read();
            harness.control.other();
            assertThat(harness.startRequests).as("read past its fence, later records do not matter").hasSize(1);
            open("quiet", "waits");
            assertThat(harness.awaitResult(quiet).success()).isTrue();
            assertThat(harness.awaitResult(waits).success()).isTrue();
        }
    }

    @Test
    void aCrashedCallAbortsItsRunningAndQueuedSiblings() {
        // the crash waits until its sibling is queued: crashing first would leave no queued sibling to abort
        CountDownLatch siblingQueued = new CountDownLatch(1);
        ScriptedTool crash = ScriptedTool.safe("crash", (args, context) -> {
            siblingQueued.await();
            throw new IllegalStateException("boom");
        });
        try (SchedulerHarness harness = new SchedulerHarness(ToolRegistry.of(List.of(read, write, crash)))) {
            String running = harness.call("turn-1", "read", named("s1"));
            await().until(() -> events.contains("start s1"));
            String crashed = harness.call("turn-1", "crash", "{}");
            String queued = harness.call("turn-1", "write", named("s2"));
            siblingQueued.countDown();

            ToolResult failure = harness.awaitResult(crashed);
            assertThat(failure.error().code()).isEqualTo(ToolErrors.TOOL_CRASHED);
            assertThat(failure.error().message()).isEqualTo("Tool crash crashed: java.lang.IllegalStateException: boom");
            for (String sibling : List.of(running, queued)) {
                assertThat(harness.awaitResult(sibling).error().code()).isEqualTo(ToolErrors.ABORTED);
                assertThat(harness.output(sibling)).isEqualTo("Tool execution was aborted: a sibling tool call failed");
            }
            await().until(() -> events.contains("interrupted s1"));
            assertThat(events).doesNotContain("start s2");
        }
    }

    @Test
    void aCallOfTheSameStepThatArrivesAfterItsSiblingCrashedIsAbortedAndTheNextStepsCallsRun() {
        ScriptedTool crash = ScriptedTool.safe("crash", (args, context) -> {
            throw new IllegalStateException("boom");
        });
        try (SchedulerHarness harness = new SchedulerHarness(ToolRegistry.of(List.of(read, write, crash)))) {
            // a read-only call starts while the model streams and crashes; the step's write is released at its end
            assertThat(harness.awaitResult(harness.callInStep("turn-1", 1, "crash", "{}")).error().code())
                    .isEqualTo(ToolErrors.TOOL_CRASHED);
            String late = harness.callInStep("turn-1", 1, "write", named("late"));

            assertThat(harness.awaitResult(late).error().code()).isEqualTo(ToolErrors.ABORTED);
            assertThat(harness.output(late)).isEqualTo("Tool execution was aborted: a sibling tool call failed");
            // the model's next step, which read the error, another turn's step 1, and the same step's call after its
            // partition was dropped (a rewind or a new owner: the crash's result may never have been published) run
            String next = harness.callInStep("turn-1", 2, "read", named("next"));
            String other = harness.callInStep("turn-2", 1, "read", named("other"));
            open("next", "other");
            assertThat(harness.awaitResult(next).success()).isTrue();
            assertThat(harness.awaitResult(other).success()).isTrue();
            harness.dropPartition();
            String again = harness.callInStep("turn-1", 1, "read", named("again"));
            open("again");
            assertThat(harness.awaitResult(again).success()).isTrue();
            assertThat(events).doesNotContain("start late");
        }
    }

    @Test
    void aCallsStepIsItsItemIdUpToTheItemsNumberAndUnknownForAnItemIdOfAnotherForm() {
        assertThat(ToolScheduler.step(withItem("run-7-s3-2"))).contains("run-7-s3");
        assertThat(ToolScheduler.step(withItem("run-7-s12-10"))).contains("run-7-s12");
        assertThat(ToolScheduler.step(withItem("item-a"))).isEmpty();
        assertThat(ToolScheduler.step(withItem("run-7-s3-out1"))).isEmpty();
        assertThat(ToolScheduler.step(withItem(null))).isEmpty();
    }

    private static ToolCall withItem(String itemId) {
        return new ToolCall("call-1", "turn-1", "thread-1", "run-7", itemId, "read", TextNode.valueOf("{}"), 0);
    }

    @Test
    void siblingsKeepRunningWhenSiblingAbortIsOffOrTheErrorIsRecoverable() {
        ScriptedTool crash = ScriptedTool.safe("crash", (args, context) -> {
            throw new IllegalStateException("boom");
        });
        ScriptedTool fail = ScriptedTool.safe("fail", (args, context) -> {
            throw new ToolException("no such thing");
        });
        try (SchedulerHarness harness = new SchedulerHarness(ToolRegistry.of(List.of(read, crash, fail)),
                "abort-siblings-on-failure", "false")) {
            String running = harness.call("turn-1", "read", named("k1"));
            assertThat(harness.awaitResult(harness.call("turn-1", "crash", "{}")).error().code()).isEqualTo(ToolErrors.TOOL_CRASHED);
            assertThat(harness.answered(running)).isFalse();
            open("k1");
            assertThat(harness.awaitResult(running).success()).isTrue();
        }
        try (SchedulerHarness harness = new SchedulerHarness(ToolRegistry.of(List.of(read, fail)))) {
            String running = harness.call("turn-1", "read", named("k2"));
            ToolResult failed = harness.awaitResult(harness.call("turn-1", "fail", "{}"));
            assertThat(failed.error().code()).isEqualTo(ToolErrors.TOOL_ERROR);
            assertThat(failed.error().message()).isEqualTo("no such thing");
            assertThat(harness.answered(running)).isFalse();
            open("k2");
            assertThat(harness.awaitResult(running).success()).isTrue();
        }
    }

    @Test
    void anUnknownToolIsAnsweredToolNotFound() {
        try (SchedulerHarness harness = new SchedulerHarness(ToolRegistry.installed())) {
            ToolResult result = harness.awaitResult(harness.call("turn-1", "launch_rockets", "{}"));

            assertThat(result.success()).isFalse();
            assertThat(result.error().code()).isEqualTo(ToolErrors.TOOL_NOT_FOUND);
            assertThat(result.error().message()).isEqualTo("Tool not found: launch_rockets");
            assertThat(SchedulerHarness.text(result.output())).isEqualTo("Tool not found: launch_rockets");
        }
    }

    @Test
    void argumentsThatDoNotMatchTheSchemaAreRefusedWithTheReason() {
        try (SchedulerHarness harness = new SchedulerHarness(ToolRegistry.installed())) {
            assertThat(invalid(harness, "{}")).contains("path");
            assertThat(invalid(harness, "{\"path\": 42}")).contains("path").contains("string");
            assertThat(invalid(harness, "{\"path\": \"a.txt\", \"colour\": \"red\"}")).contains("colour");
            assertThat(invalid(harness, "read the readme please")).contains("arguments must be a JSON object");
        }
    }

    private static String invalid(SchedulerHarness harness, String arguments) {
        ToolResult result = harness.awaitResult(harness.call("turn-1", "read_file", arguments));
        assertThat(result.error().code()).isEqualTo(ToolErrors.INVALID_ARGUMENTS);
        assertThat(result.error().message()).startsWith("Invalid arguments for read_file: ");
        return result.error().message();
    }

    @Test
    void theThirdIdenticalCallInARowIsNotRun() {
        AtomicInteger runs = new AtomicInteger();
        ScriptedTool count = ScriptedTool.safe("count", (args, context) -> TextNode.valueOf("run " + runs.incrementAndGet()));
        try (SchedulerHarness harness = new SchedulerHarness(ToolRegistry.of(List.of(count)))) {
            assertThat(harness.awaitResult(harness.call("turn-1", "count", "{\"x\": 1, \"y\": 2}")).success()).isTrue();
            assertThat(harness.awaitResult(harness.call("turn-1", "count", "{\"y\": 2, \"x\": 1}")).success()).isTrue();
            ToolResult third = harness.awaitResult(harness.call("turn-1", "count", "{\"x\": 1, \"y\": 2}"));

            assertThat(third.error().code()).isEqualTo(ToolErrors.DOOM_LOOP);
            assertThat(third.error().message()).contains("call 3 in a row of count with identical arguments");
            assertThat(runs).hasValue(2);

            assertThat(harness.awaitResult(harness.call("turn-2", "count", "{\"x\": 1, \"y\": 2}")).success())
                    .as("another turn counts on its own").isTrue();
            assertThat(harness.awaitResult(harness.call("turn-1", "count", "{\"x\": 2}")).success()).isTrue();
            assertThat(harness.awaitResult(harness.call("turn-1", "count", "{\"x\": 1, \"y\": 2}")).success())
                    .as("a different call in between resets the count").isTrue();
        }
    }

    // ---- approvals ----

    @Test
    void anAskCallWaitsForTheFirstDecisionAndLaterOnesChangeNothing() {
        AtomicInteger runs = new AtomicInteger();
        ScriptedTool write = ScriptedTool.safe("write", (args, context) -> TextNode.valueOf("run " + runs.incrementAndGet()));
        try (SchedulerHarness harness = new SchedulerHarness(ToolRegistry.of(List.of(write)), "approval.write", "ask")) {
            String approved = harness.call("turn-1", "write", "{}");
            String denied = harness.call("turn-1", "write", "{\"other\": true}");

            assertThat(harness.approvalRequests).containsExactly(approved, denied);
            assertThat(harness.askReasons).containsEntry(approved, ControlMessage.ASK_POLICY);
            assertThat(harness.answered(approved)).as("held until decided").isFalse();
            harness.scheduler.decide("turn-1", approved, true, null);
            harness.scheduler.decide("turn-1", approved, false, "too late");
            harness.scheduler.decide("turn-1", denied, false, "not this one");
            harness.scheduler.decide("turn-1", denied, true, null);

            assertThat(harness.awaitResult(approved).success()).isTrue();
            ToolResult refusal = harness.awaitResult(denied);
            assertThat(refusal.success()).isFalse();
            assertThat(refusal.error().code()).isEqualTo(ToolErrors.DENIED);
            assertThat(SchedulerHarness.text(refusal.output())).isEqualTo("Not executed: the call was denied: not this one");
            assertThat(runs).hasValue(1);
        }
    }

    @Test
    void anAskCallWithoutADecisionInTimeIsDeniedAndTheDenialAnnounced() {
        ScriptedTool write = ScriptedTool.safe("write", (args, context) -> TextNode.valueOf("ran"));
        try (SchedulerHarness harness = new SchedulerHarness(ToolRegistry.of(List.of(write)), "approval.default", "ask",
                "approval-timeout-ms", "1000")) {
            String callId = harness.call("turn-1", "write", "{}");

            ToolResult result = harness.awaitResult(callId);

            assertThat(result.error().code()).isEqualTo(ToolErrors.DENIED);
            assertThat(SchedulerHarness.text(result.output())).isEqualTo("Not executed: the call was denied: no approval within 1 s");
            assertThat(harness.expiredApprovals).containsEntry(callId, "no approval within 1 s");
        }
    }

    @Test
    void aDeniedToolNeverRunsAndACancelEndsACallAwaitingApproval() {
        ScriptedTool write = ScriptedTool.safe("write", (args, context) -> TextNode.valueOf("ran"));
        ScriptedTool shell = ScriptedTool.safe("shell", (args, context) -> TextNode.valueOf("ran"));
        try (SchedulerHarness harness = new SchedulerHarness(ToolRegistry.of(List.of(write, shell)),
                "approval.write", "ask", "approval.shell", "deny")) {
            ToolResult refused = harness.awaitResult(harness.call("turn-1", "shell", "{}"));
            String held = harness.call("turn-1", "write", "{}");

            harness.scheduler.cancelTurn("turn-1");

            assertThat(refused.error().code()).isEqualTo(ToolErrors.DENIED);
            assertThat(SchedulerHarness.text(refused.output()))
                    .isEqualTo("Not executed: the tool shell is denied by this deployment's approval policy");
            assertThat(harness.awaitResult(held).error().code()).isEqualTo(ToolErrors.ABORTED);
        }
    }

    @Test
    void withApprovalsOnTheThirdIdenticalCallAsksInsteadOfBeingRefused() {
        AtomicInteger runs = new AtomicInteger();
        ScriptedTool count = ScriptedTool.safe("count", (args, context) -> TextNode.valueOf("run " + runs.incrementAndGet()));
        try (SchedulerHarness harness = new SchedulerHarness(ToolRegistry.of(List.of(count)), "approval.other", "ask")) {
            harness.awaitResult(harness.call("turn-1", "count", "{}"));
            harness.awaitResult(harness.call("turn-1", "count", "{}"));
            String third = harness.call("turn-1", "count", "{}");

            assertThat(harness.approvalRequests).containsExactly(third);
            assertThat(harness.askReasons).containsEntry(third, ControlMessage.ASK_DOOM_LOOP);
            harness.scheduler.decide("turn-1", third, true, null);
            assertThat(harness.awaitResult(third).success()).isTrue();
            assertThat(runs).hasValue(3);
        }
    }

    @Test
    void aCallIdReusedByAnotherTurnIsHeldAndDecidedApartFromIt() {
        ScriptedTool write = ScriptedTool.safe("write", (args, context) -> TextNode.valueOf("ran in " + context.turnId()));
        try (SchedulerHarness harness = new SchedulerHarness(ToolRegistry.of(List.of(write)), "approval.write", "ask")) {
            harness.callWithId("turn-a", "call-1", "write", "{}");
            harness.callWithId("turn-b", "call-1", "write", "{}");

            assertThat(harness.approvalRequests).as("each turn's call is held on its own").containsExactly("call-1", "call-1");
            harness.scheduler.decide("turn-b", "call-1", true, null);
            assertThat(SchedulerHarness.text(harness.awaitResult("turn-b", "call-1").output())).isEqualTo("ran in turn-b");
            assertThat(harness.answered("turn-a", "call-1")).as("turn-b's approval decides nothing of turn-a").isFalse();

            harness.scheduler.decide("turn-a", "call-1", false, "not this one");
            assertThat(harness.awaitResult("turn-a", "call-1").error().code()).isEqualTo(ToolErrors.DENIED);
        }
    }

    /**
     * Issue 21: "one tenant can hold all 100 in-flight slots". A tenant's calls hold at most its share of the
     * executor's in-flight calls; one more of its calls is answered QUOTA_EXCEEDED at once, while another
     * tenant's call still starts; once one of the first tenant's calls finishes, it may run another.
     */
    @Test
    void aTenantHoldsAtMostItsShareOfInFlightCallsAndAnotherTenantsCallStillRuns() {
        try (SchedulerHarness harness = new SchedulerHarness(ToolRegistry.of(List.of(read)),
                "max-in-flight", "4", "tenant-max-in-flight", "2")) {
            String first = harness.callOf("tenant-a", "thread-1", "turn-a1", "read", named("a1"));
            harness.callOf("tenant-a", "thread-2", "turn-a2", "read", named("a2"));
            String overShare = harness.callOf("tenant-a", "thread-3", "turn-a3", "read", named("a3"));

            assertThat(harness.awaitResult(overShare).error().code()).isEqualTo(ToolErrors.QUOTA_EXCEEDED);
            assertThat(harness.awaitResult(overShare).error().message()).contains("tenant tenant-a already has 2 tool calls "
                    + "in flight on this executor, its share (turnstream.tool-executor.tenant-max-in-flight)");
            assertThat(events).doesNotContain("start a3");

            String ofB = harness.callOf("tenant-b", "thread-1", "turn-b1", "read", named("b1"));
            await().until(() -> events.contains("start b1"));
            open("b1");
            assertThat(harness.awaitResult(ofB).success()).isTrue();

            open("a1");
            assertThat(harness.awaitResult(first).success()).isTrue();
            String again = harness.callOf("tenant-a", "thread-3", "turn-a4", "read", named("a4"));
            open("a2", "a4");
            assertThat(harness.awaitResult(again).success()).isTrue();
        }
    }

    /** A gateway without API keys serves one party: its calls (of no tenant) have no share to keep for others. */
    @Test
    void callsOfNoTenantHaveNoShare() {
        try (SchedulerHarness harness = new SchedulerHarness(ToolRegistry.of(List.of(read)),
                "max-in-flight", "4", "tenant-max-in-flight", "2")) {
            List<String> calls = List.of(harness.call("turn-1", "read", named("n1")), harness.call("turn-2", "read", named("n2")),
                    harness.call("turn-3", "read", named("n3")));
            open("n1", "n2", "n3");

            assertThat(calls).allSatisfy(call -> assertThat(harness.awaitResult(call).success()).isTrue());
        }
    }
}
