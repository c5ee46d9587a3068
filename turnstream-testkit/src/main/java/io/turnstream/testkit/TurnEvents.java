package io.turnstream.testkit;

import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.model.ErrorInfo;
import io.turnstream.model.ItemType;
import io.turnstream.model.OutputItem;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;
import java.util.ArrayList;
import java.util.List;

/**
 * The raw events ({@code llm.raw-events}) of one turn, written the way a gateway publishes them:
 * {@code response_start}, then items (start, deltas, done), then {@code response_done} or
 * {@code response_error}. The run id is the record key; the turn id names the turn in every output.
 *
 * <pre>{@code
 * List<StreamEvent> turn = TurnEvents.turn("turn-1")
 *         .message("msg-1", "Hello", ", world")
 *         .toolCall("call-item-1", "read_file", "{\"path\":\"README.md\"}", "call-1")
 *         .completed();
 * }</pre>
 */
public final class TurnEvents {

    private final String runId;
    private final String turnId;
    private final List<StreamEvent> events = new ArrayList<>();
    private long clock;

    private TurnEvents(String runId, String turnId, String threadId) {
        this.runId = runId;
        this.turnId = turnId;
        add(new StreamPayload.ResponseStart("resp-" + turnId, turnId, threadId, null, "test-model", "test", 0));
    }

    /** A turn of thread {@code thread-<turnId>}, run {@code run-<turnId>}. */
    public static TurnEvents turn(String turnId) {
        return new TurnEvents("run-" + turnId, turnId, "thread-" + turnId);
    }

    public static TurnEvents turn(String runId, String turnId, String threadId) {
        return new TurnEvents(runId, turnId, threadId);
    }

    public String runId() {
        return runId;
    }

    public String turnId() {
        return turnId;
    }

    /** An agent message streamed as one delta per piece. */
    public TurnEvents message(String itemId, String... deltas) {
        return streamed(itemId, ItemType.MESSAGE, deltas);
    }

    public TurnEvents reasoning(String itemId, String... deltas) {
        return streamed(itemId, ItemType.REASONING, deltas);
    }

    /** A message item started and streamed but not done: the turn is still writing it. */
    public TurnEvents messageStreaming(String itemId, String... deltas) {
        add(new StreamPayload.ItemStart(itemId, ItemType.MESSAGE, null, null, null, null, null));
        for (String delta : deltas) {
            add(new StreamPayload.ItemDelta(itemId, delta));
        }
        return this;
    }

    /** A function call with its complete arguments: the topology publishes it to {@code llm.tool-calls}. */
    public TurnEvents toolCall(String itemId, String toolName, String argumentsJson, String callId) {
        add(new StreamPayload.ItemStart(itemId, ItemType.FUNCTION_CALL, null, toolName, null, callId, null));
        add(new StreamPayload.ItemDone(itemId, new OutputItem(itemId, ItemType.FUNCTION_CALL, null, null, toolName,
                TextNode.valueOf(argumentsJson), callId, null, null, null)));
        return this;
    }

    /** The output of a tool call, as the agent loop records it. */
    public TurnEvents toolOutput(String itemId, String callId, String output, boolean success) {
        add(new StreamPayload.ItemStart(itemId, ItemType.FUNCTION_CALL_OUTPUT, null, null, null, callId, null));
        add(new StreamPayload.ItemDone(itemId, new OutputItem(itemId, ItemType.FUNCTION_CALL_OUTPUT, null, null, null,
                null, callId, TextNode.valueOf(output), success, null)));
        return this;
    }

    /** Any event of the contract not covered above (statuses, item errors, cancellations). */
    public TurnEvents event(StreamPayload payload) {
        add(payload);
        return this;
    }

    /** Ends the turn with {@code response_done} {@code complete}; the events so far, in order. */
    public List<StreamEvent> completed() {
        add(new StreamPayload.ResponseDone("resp-" + turnId, ResponseStatus.COMPLETE, new StreamPayload.Usage(10, 20, 30), "stop"));
        return events();
    }

    /** Ends the turn with {@code response_error}. */
    public List<StreamEvent> failed(String code, String message) {
        add(new StreamPayload.ResponseError("resp-" + turnId, ErrorInfo.of(code, message)));
        return events();
    }

    /** The events so far, the turn left open. */
    public List<StreamEvent> events() {
        return List.copyOf(events);
    }

    private TurnEvents streamed(String itemId, ItemType itemType, String... deltas) {
        add(new StreamPayload.ItemStart(itemId, itemType, null, null, null, null, null));
        for (String delta : deltas) {
            add(new StreamPayload.ItemDelta(itemId, delta));
        }
        add(new StreamPayload.ItemDone(itemId, null));
        return this;
    }

    private void add(StreamPayload payload) {
        events.add(StreamEvent.of(turnId + "-e" + events.size(), clock++, runId, payload));
    }
}
