package io.turnstream.gateway.provider;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.model.ErrorInfo;
import io.turnstream.model.Json;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamPayload.Usage;
import java.time.Duration;
import java.util.List;

/**
 * How one model call ended.
 *
 * @param finishReason one of {@link FinishReasons} or the provider's own word; null when unknown
 * @param usage merged token counts, or null when the provider reported none
 * @param toolCalls the completed tool calls, in stream order
 * @param assistantContent the step in the adapter's wire shape, to send back on the next step
 * @param error why the step failed, when {@code status} is ERROR
 * @param retryable whether calling again may succeed (rate limit, overload, dropped connection)
 * @param overloaded whether the provider said it is overloaded (a fallback model may help)
 * @param retryAfter how long the provider asked us to wait, or null
 * @param itemsPublished how many payloads this step published; a retry is only allowed at zero
 */
public record StepOutcome(ResponseStatus status, String finishReason, Usage usage, List<ToolCallRequest> toolCalls,
                          JsonNode assistantContent, ErrorInfo error, boolean retryable, boolean overloaded,
                          Duration retryAfter, int itemsPublished) {

    public StepOutcome {
        toolCalls = List.copyOf(toolCalls);
    }

    /** A step cancelled before anything was streamed (while waiting to retry, say). */
    public static StepOutcome abortedBeforeStream() {
        return new StepOutcome(ResponseStatus.ABORTED, null, null, List.of(), Json.MAPPER.createArrayNode(), null, false, false,
                null, 0);
    }

    /** A step the provider refused before streaming (an HTTP error status). */
    public static StepOutcome refused(ErrorInfo error, boolean retryable, boolean overloaded, Duration retryAfter,
                                      int itemsPublished) {
        return new StepOutcome(ResponseStatus.ERROR, null, null, List.of(), Json.MAPPER.createArrayNode(), error, retryable,
                overloaded, retryAfter, itemsPublished);
    }

    public boolean canRetry() {
        return status == ResponseStatus.ERROR && retryable && itemsPublished == 0;
    }
}
