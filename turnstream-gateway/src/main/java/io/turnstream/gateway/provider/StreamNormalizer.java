package io.turnstream.gateway.provider;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.gateway.sse.SseEvent;
import io.turnstream.model.ErrorInfo;
import io.turnstream.model.Json;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamPayload.Usage;
import java.io.IOException;

/**
 * Turns one provider response stream into items and a {@link StepOutcome}. Subclasses handle their
 * protocol's event types; this class owns what every protocol shares: JSON decoding (undecodable
 * data ends the step as bad input), the terminal state (nothing is handled after it), closing open
 * items at the end, and the outcome.
 */
public abstract class StreamNormalizer {

    protected final StepItems items;
    protected final UsageTracker usage = new UsageTracker();
    protected String finishReason;

    private ResponseStatus status;
    private ErrorInfo error;
    private boolean retryable;
    private boolean overloaded;

    protected StreamNormalizer(StepItems items) {
        this.items = items;
    }

    /** Handles one event; events after the terminal one are ignored. */
    public final void accept(SseEvent event) {
        // blank data is a keep-alive some proxies send
        if (terminated() || event.data().isBlank() || acceptSentinel(event.data())) {
            return;
        }
        JsonNode json;
        try {
            json = Json.MAPPER.readTree(event.data());
        } catch (IOException e) {
            badData(event, "is not valid JSON (" + firstLine(e.getMessage()) + ")");
            return;
        }
        if (json == null || !json.isObject()) {
            badData(event, "is not a JSON object");
            return;
        }
        String type = json.path("type").asText("");
        handle(type.isEmpty() && event.event() != null ? event.event() : type, json);
    }

    /** Whether the stream has reached its end (completed or failed). */
    public final boolean terminated() {
        return status != null;
    }

    /** The stream is over (end of body): the outcome, closing what the provider left open. */
    public final StepOutcome end() {
        if (!terminated()) {
            endedWithoutTerminal();
        }
        return outcome();
    }

    /** The step was stopped from outside: by a cancel (ABORTED) or a broken or stalled connection (ERROR). */
    public final StepOutcome interrupt(ResponseStatus cause, ErrorInfo why, boolean mayRetry) {
        if (!terminated()) {
            if (cause == ResponseStatus.ABORTED) {
                items.cancelAll();
                status = ResponseStatus.ABORTED;
            } else {
                fail(why, mayRetry, false);
            }
        }
        return outcome();
    }

    /** Data that is not JSON but means something to the protocol (Chat's {@code [DONE]}). */
    protected boolean acceptSentinel(String data) {
        return false;
    }

    protected abstract void handle(String type, JsonNode json);

    /** The step in the protocol's own shape, for the next request. */
    protected abstract JsonNode assistantContent();

    protected abstract Usage usage();

    /** The name of the protocol's terminal event, for error messages. */
    protected abstract String terminalEvent();

    /** Default: a stream without its terminal event is truncated, which a retry may cure. */
    protected void endedWithoutTerminal() {
        fail(ErrorInfo.of(ErrorCodes.STREAM_TRUNCATED, "the provider's stream ended before " + terminalEvent()),
                true, false);
    }

    protected final void complete(String reason) {
        items.closeAll();
        finishReason = reason;
        status = ResponseStatus.COMPLETE;
    }

    protected final void fail(ErrorInfo why, boolean mayRetry, boolean isOverloaded) {
        if (mayRetry && items.withdrawsOnRetryableFailure()) {
            items.withdraw();
        } else {
            items.failAll(why);
        }
        error = why;
        retryable = mayRetry;
        overloaded = isOverloaded;
        status = ResponseStatus.ERROR;
    }

    /** A provider's in-stream error: its own type as the code, transient types retryable. */
    protected final void providerError(String type, String message) {
        String code = type == null || type.isBlank() ? ErrorCodes.PROVIDER_ERROR : type;
        fail(ErrorInfo.of(code, message == null || message.isBlank() ? "the provider reported an error" : message),
                ErrorCodes.transientType(type), ErrorCodes.overloadedType(type));
    }

    private void badData(SseEvent event, String problem) {
        String name = event.event() != null ? "event '" + event.event() + "'" : "an event";
        fail(ErrorInfo.of(ErrorCodes.BAD_PROVIDER_DATA, "bad input from the provider: the data of " + name + " "
                + problem), false, false);
    }

    private StepOutcome outcome() {
        return new StepOutcome(status, finishReason, usage(), items.toolCalls(), assistantContent(), error,
                retryable, overloaded, null, items.published());
    }

    private static String firstLine(String message) {
        if (message == null) {
            return "unreadable";
        }
        int newline = message.indexOf('\n');
        return newline < 0 ? message : message.substring(0, newline);
    }

    /** The text of a field, or null when it is absent or JSON null. */
    protected static String text(JsonNode node, String field) {
        JsonNode value = node.get(field);
        return value == null || value.isNull() ? null : value.asText();
    }
}
