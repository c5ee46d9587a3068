package io.turnstream.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.model.Json;
import io.turnstream.model.ToolCall;
import io.turnstream.model.ToolResult;
import io.turnstream.runtime.Settings;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.TopicPartition;

/**
 * Drives a {@link ToolScheduler} without Kafka: submits calls, starts non-idempotent calls at once (or
 * holds them, to show the started-marker handshake) and collects results, failing on a second result for
 * any call of a turn.
 */
final class SchedulerHarness implements AutoCloseable {

    private static final TopicPartition PARTITION = new TopicPartition("llm.tool-calls", 0);

    final Path workspace;
    final ToolScheduler scheduler;
    final List<ToolScheduler.ScheduledCall> startRequests = new CopyOnWriteArrayList<>();
    /** Call ids the scheduler asked approval for, in order. */
    final List<String> approvalRequests = new CopyOnWriteArrayList<>();
    /** Why each call asked: policy or doom_loop. */
    final Map<String, String> askReasons = new ConcurrentHashMap<>();
    /** Denials the scheduler announced for want of a decision: call id to reason. */
    final Map<String, String> expiredApprovals = new ConcurrentHashMap<>();
    private final Map<String, ToolResult> results = new ConcurrentHashMap<>();
    private final Map<CallKey, ToolResult> resultsByTurnAndCall = new ConcurrentHashMap<>();
    private final List<String> duplicates = new CopyOnWriteArrayList<>();
    private final AtomicLong offsets = new AtomicLong();
    /** {@code llm.control} as the cancel listener reads it: records written, and how far the listener has handed them over. */
    final ControlLog control = new ControlLog();
    private volatile boolean holdStarts;

    /**
     * A model of {@code llm.control} (one partition) and the executor's cancel listener: {@link #cancel} writes a
     * cancel the listener has not read yet, {@link #read} hands every record written to the scheduler and then says
     * where it got, as the listener's next poll does. Each call is submitted with the log's end as its fence, as the
     * service takes it after the poll that read the call.
     */
    final class ControlLog {
        private static final TopicPartition CONTROL = new TopicPartition("llm.control", 0);
        /** The turn id each record cancels; null for a record of another kind (a decision, a notice). */
        private final List<String> records = new CopyOnWriteArrayList<>();
        private int read;

        /** A cancel of the turn is written to {@code llm.control}; the listener has not read it yet. */
        void cancel(String turnId) {
            records.add(turnId);
        }

        /** A record that cancels nothing (another turn's notice, say) is written; the listener has not read it yet. */
        void other() {
            records.add(null);
        }

        /** The listener reads everything written so far, hands it to the scheduler, then says where it got. */
        synchronized void read() {
            while (read < records.size()) {
                String cancelled = records.get(read++);
                if (cancelled != null) {
                    scheduler.cancelTurn(cancelled);
                }
            }
            scheduler.controlRead(Map.of(CONTROL, (long) read));
        }

        ControlFence end() {
            return new ControlFence(Map.of(CONTROL, (long) records.size()));
        }
    }

    /** @param settings {@code turnstream.tool-executor.*} keys without the prefix, in pairs */
    SchedulerHarness(ToolRegistry registry, String... settings) {
        this(Clock.systemUTC(), registry, settings);
    }

    /** As above, with the time read from {@code clock}. */
    SchedulerHarness(Clock clock, ToolRegistry registry, String... settings) {
        try {
            workspace = Files.createTempDirectory("turnstream-ws");
            Properties props = new Properties();
            props.setProperty(ToolExecutorConfig.WORKSPACE, workspace.toString());
            for (int i = 0; i < settings.length; i += 2) {
                props.setProperty(ToolExecutorConfig.PREFIX + settings[i], settings[i + 1]);
            }
            ToolExecutorConfig config = ToolExecutorConfig.from(Settings.of(props));
            scheduler = new ToolScheduler(registry, config, new Workspace(workspace), new ToolScheduler.Outcomes() {
                @Override
                public void resolved(ToolCall call, RecordPosition position, ToolResult result) {
                    if (resultsByTurnAndCall.putIfAbsent(CallKey.of(call), result) != null) {
                        duplicates.add(call.turnId() + "/" + call.callId());
                    }
                    results.put(call.callId(), result);
                }

                @Override
                public void approvalRequested(ToolScheduler.ScheduledCall call) {
                    approvalRequests.add(call.call.callId());
                    askReasons.put(call.call.callId(), call.askedBecause());
                }

                @Override
                public void approvalExpired(ToolScheduler.ScheduledCall call, String reason) {
                    expiredApprovals.put(call.call.callId(), reason);
                }

                @Override
                public void startRequested(ToolScheduler.ScheduledCall call) {
                    startRequests.add(call);
                    if (!holdStarts) {
                        scheduler.launch(call);
                    }
                }
            }, clock);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Non-idempotent calls wait for {@link ToolScheduler#launch}, as they wait for their started marker in the service. */
    SchedulerHarness holdingStarts() {
        holdStarts = true;
        return this;
    }

    /** Submits a call with JSON arguments (or any text, sent as a raw string when it is not JSON); returns its call id. */
    String call(String turnId, String tool, String arguments) {
        return callOf(null, "thread-1", turnId, tool, arguments);
    }

    /** As {@link #call}, for a turn of a tenant (null for none) and thread. */
    String callOf(String tenantId, String threadId, String turnId, String tool, String arguments) {
        return submit(tenantId, threadId, turnId, turnId + "-call-" + offsets.incrementAndGet(), tool, arguments);
    }

    /** As {@link #call}, with the call id given (another turn may use the same one). */
    String callWithId(String turnId, String callId, String tool, String arguments) {
        offsets.incrementAndGet();
        return submit(null, "thread-1", turnId, callId, tool, arguments);
    }

    /** As {@link #call}, made in model step {@code step} of the turn: its item id is the gateway's {@code run-1-s<step>-<n>}. */
    String callInStep(String turnId, int step, String tool, String arguments) {
        String callId = turnId + "-call-" + offsets.incrementAndGet();
        return submit(null, "thread-1", turnId, callId, "run-1-s" + step + "-" + offsets.get(), tool, arguments);
    }

    /** Stops the calls read from the harness's one partition, as a rebalance or a rewind does. */
    void dropPartition() {
        scheduler.dropPartitions(List.of(PARTITION));
    }

    private String submit(String tenantId, String threadId, String turnId, String callId, String tool, String arguments) {
        return submit(tenantId, threadId, turnId, callId, "item-" + callId, tool, arguments);
    }

    private String submit(String tenantId, String threadId, String turnId, String callId, String itemId, String tool,
                          String arguments) {
        scheduler.submit(new ToolCall(callId, turnId, threadId, "run-1", itemId, tool,
                Json.parseOrText(arguments), System.currentTimeMillis(), tenantId), new RecordPosition(PARTITION, offsets.get()),
                control.end());
        return callId;
    }

    ToolResult awaitResult(String callId) {
        await().atMost(Duration.ofSeconds(30)).until(() -> results.containsKey(callId));
        return results.get(callId);
    }

    ToolResult awaitResult(String turnId, String callId) {
        CallKey key = new CallKey(turnId, callId);
        await().atMost(Duration.ofSeconds(30)).until(() -> resultsByTurnAndCall.containsKey(key));
        return resultsByTurnAndCall.get(key);
    }

    boolean answered(String turnId, String callId) {
        return resultsByTurnAndCall.containsKey(new CallKey(turnId, callId));
    }

    boolean answered(String callId) {
        return results.containsKey(callId);
    }

    String output(String callId) {
        return Json.asText(awaitResult(callId).output());
    }

    static String text(JsonNode output) {
        return Json.asText(output);
    }

    @Override
    public void close() {
        scheduler.close();
        assertThat(duplicates).as("call ids answered more than once").isEmpty();
    }
}
