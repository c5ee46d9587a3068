package io.turnstream.model;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;

/** The payload of a {@link StreamEvent}; {@code type} is its discriminator. */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "type")
@JsonSubTypes({
    @JsonSubTypes.Type(value = StreamPayload.ResponseStart.class, name = StreamPayload.RESPONSE_START),
    @JsonSubTypes.Type(value = StreamPayload.ItemStart.class, name = StreamPayload.ITEM_START),
    @JsonSubTypes.Type(value = StreamPayload.ItemDelta.class, name = StreamPayload.ITEM_DELTA),
    @JsonSubTypes.Type(value = StreamPayload.ItemDone.class, name = StreamPayload.ITEM_DONE),
    @JsonSubTypes.Type(value = StreamPayload.ItemError.class, name = StreamPayload.ITEM_ERROR),
    @JsonSubTypes.Type(value = StreamPayload.ItemCancelled.class, name = StreamPayload.ITEM_CANCELLED),
    @JsonSubTypes.Type(value = StreamPayload.ItemWithdrawn.class, name = StreamPayload.ITEM_WITHDRAWN),
    @JsonSubTypes.Type(value = StreamPayload.ResponseDone.class, name = StreamPayload.RESPONSE_DONE),
    @JsonSubTypes.Type(value = StreamPayload.ResponseError.class, name = StreamPayload.RESPONSE_ERROR),
    @JsonSubTypes.Type(value = StreamPayload.TurnStatus.class, name = StreamPayload.TURN_STATUS),
    @JsonSubTypes.Type(value = StreamPayload.ToolStatus.class, name = StreamPayload.TOOL_STATUS)
})
public sealed interface StreamPayload {

    String RESPONSE_START = "response_start";
    String ITEM_START = "item_start";
    String ITEM_DELTA = "item_delta";
    String ITEM_DONE = "item_done";
    String ITEM_ERROR = "item_error";
    String ITEM_CANCELLED = "item_cancelled";
    String ITEM_WITHDRAWN = "item_withdrawn";
    String RESPONSE_DONE = "response_done";
    String RESPONSE_ERROR = "response_error";
    String TURN_STATUS = "turn_status";
    String TOOL_STATUS = "tool_status";

    /** The discriminator; Jackson writes it from the subtype name. */
    @JsonIgnore
    String type();

    /** {@code tenantId}: the tenant whose API key started the turn; null when the gateway runs without keys. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record ResponseStart(String responseId, String turnId, String threadId, String agentId,
                         String modelId, String providerId, long createdAt, String tenantId) implements StreamPayload {

        /** A turn of no tenant. */
        public ResponseStart(String responseId, String turnId, String threadId, String agentId,
                             String modelId, String providerId, long createdAt) {
            this(responseId, turnId, threadId, agentId, modelId, providerId, createdAt, null);
        }

        @Override
        public String type() {
            return RESPONSE_START;
        }
    }

    /**
     * {@code arguments} may be JSON text or a JSON value. {@code item_type} stays the text any producer
     * wrote: the topology turns it into an {@link ItemType} and dead-letters an unknown one, naming the item.
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record ItemStart(String itemId, String itemType, String initialContent, String name,
                     JsonNode arguments, String callId, String origin) implements StreamPayload {

        public ItemStart(String itemId, ItemType itemType, String initialContent, String name,
                         JsonNode arguments, String callId, String origin) {
            this(itemId, itemType.wire(), initialContent, name, arguments, callId, origin);
        }

        /** {@code item_type} as an {@link ItemType}, or null when it is not one of the contract. */
        @JsonIgnore
        public ItemType knownItemType() {
            return ItemType.fromWire(itemType);
        }
        @Override
        public String type() {
            return ITEM_START;
        }
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record ItemDelta(String itemId, String deltaContent) implements StreamPayload {
        @Override
        public String type() {
            return ITEM_DELTA;
        }
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record ItemDone(String itemId, OutputItem finalItem) implements StreamPayload {
        @Override
        public String type() {
            return ITEM_DONE;
        }
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record ItemError(String itemId, ErrorInfo error) implements StreamPayload {
        @Override
        public String type() {
            return ITEM_ERROR;
        }
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record ItemCancelled(String itemId) implements StreamPayload {
        @Override
        public String type() {
            return ITEM_CANCELLED;
        }
    }

    /**
     * Takes back an item of a model call that failed and is made again, open or already done: the
     * topology emits a {@code withdrawn} upsert for it, tombstones its {@code llm.item-state} key and,
     * for a function call, never publishes it to {@code llm.tool-calls}.
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record ItemWithdrawn(String itemId) implements StreamPayload {
        @Override
        public String type() {
            return ITEM_WITHDRAWN;
        }
    }

    /**
     * @param usage what the turn's model calls used that produced its steps
     * @param modelId the model that produced the turn's last step, when it differs from response_start's or is known
     * @param failedAttemptsUsage what the model calls used that failed and were made again (or fell back), apart
     *                            from {@code usage}; null when none failed after using tokens
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record ResponseDone(String responseId, ResponseStatus status, Usage usage, String finishReason, String modelId,
                        Usage failedAttemptsUsage) implements StreamPayload {

        public ResponseDone(String responseId, ResponseStatus status, Usage usage, String finishReason) {
            this(responseId, status, usage, finishReason, null, null);
        }

        public ResponseDone(String responseId, ResponseStatus status, Usage usage, String finishReason, String modelId) {
            this(responseId, status, usage, finishReason, modelId, null);
        }

        @Override
        public String type() {
            return RESPONSE_DONE;
        }
    }

    /**
     * The turn failed. Its usage is reported as on {@link ResponseDone}: what it spent is spent although
     * it failed.
     *
     * @param usage what the turn's model calls used that produced its completed steps, or null when none reported any
     * @param failedAttemptsUsage what its model calls used that failed (made again, fell back, or the last one
     *                            that failed the turn), apart from {@code usage}; null when none reported any
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record ResponseError(String responseId, ErrorInfo error, Usage usage, Usage failedAttemptsUsage)
            implements StreamPayload {

        /** A failure that used no tokens, or whose usage is not known. */
        public ResponseError(String responseId, ErrorInfo error) {
            this(responseId, error, null, null);
        }

        @Override
        public String type() {
            return RESPONSE_ERROR;
        }
    }

    /**
     * What the gateway is doing for the turn between items: {@code status} is one of
     * {@code retrying} (attempt, delay_ms, error), {@code fallback} (from_model, to_model, error),
     * {@code stalled} (error), {@code compacting} (context_tokens, context_window), {@code running}
     * (the model is being called again after one of those), or {@code step_completed} (step, model_id,
     * usage: what one model call used and cost).
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record TurnStatus(TurnActivity status, Integer attempt, Long delayMs, String fromModel, String toModel, ErrorInfo error,
                      Long contextTokens, Long contextWindow, Integer step, String modelId, Usage usage)
            implements StreamPayload {

        public TurnStatus(TurnActivity status, Integer attempt, Long delayMs, String fromModel, String toModel, ErrorInfo error,
                          Long contextTokens, Long contextWindow) {
            this(status, attempt, delayMs, fromModel, toModel, error, contextTokens, contextWindow, null, null, null);
        }

        @Override
        public String type() {
            return TURN_STATUS;
        }
    }

    /**
     * One step of a tool call's lifecycle: {@code pending} (sent to the executor),
     * {@code awaiting_approval}, {@code running} (the executor started it, {@code started_at}),
     * then {@code completed} or {@code error} (with both times) or {@code aborted} (cancelled).
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record ToolStatus(String itemId, String callId, String toolName, ToolState status, Long startedAt, Long completedAt,
                      ErrorInfo error) implements StreamPayload {

        @Override
        public String type() {
            return TOOL_STATUS;
        }
    }

    /**
     * Token counts as providers report them (snake case inside StreamEvents). {@code prompt_tokens}
     * includes the cached input; {@code cache_read_tokens} and {@code cache_write_tokens} say how much
     * of it was read from or written to the provider's prompt cache, {@code reasoning_tokens} how much
     * of the completion was reasoning. {@code cost_usd} is priced from the gateway's price table.
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Usage(long promptTokens, long completionTokens, long totalTokens, Long cacheReadTokens,
                 Long cacheWriteTokens, Long reasoningTokens, Double costUsd) {

        public Usage(long promptTokens, long completionTokens, long totalTokens) {
            this(promptTokens, completionTokens, totalTokens, null, null, null, null);
        }

        /** The sum of two usages; a cache or reasoning count or a cost is present when either has it. */
        public Usage plus(Usage other) {
            return new Usage(promptTokens + other.promptTokens, completionTokens + other.completionTokens,
                    totalTokens + other.totalTokens, sum(cacheReadTokens, other.cacheReadTokens),
                    sum(cacheWriteTokens, other.cacheWriteTokens), sum(reasoningTokens, other.reasoningTokens),
                    costUsd == null || other.costUsd == null ? (costUsd == null ? other.costUsd : costUsd)
                            : Double.valueOf(costUsd + other.costUsd));
        }

        private static Long sum(Long a, Long b) {
            return a == null || b == null ? (a == null ? b : a) : Long.valueOf(a + b);
        }
    }
}
