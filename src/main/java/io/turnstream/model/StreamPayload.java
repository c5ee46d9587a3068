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
    @JsonSubTypes.Type(value = StreamPayload.ResponseDone.class, name = StreamPayload.RESPONSE_DONE),
    @JsonSubTypes.Type(value = StreamPayload.ResponseError.class, name = StreamPayload.RESPONSE_ERROR)
})
public sealed interface StreamPayload {

    String RESPONSE_START = "response_start";
    String ITEM_START = "item_start";
    String ITEM_DELTA = "item_delta";
    String ITEM_DONE = "item_done";
    String ITEM_ERROR = "item_error";
    String ITEM_CANCELLED = "item_cancelled";
    String RESPONSE_DONE = "response_done";
    String RESPONSE_ERROR = "response_error";

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

    /** {@code arguments} may be JSON text or a JSON value. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record ItemStart(String itemId, String itemType, String initialContent, String name,
                     JsonNode arguments, String callId, String origin) implements StreamPayload {
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

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record ResponseDone(String responseId, String status, Usage usage, String finishReason) implements StreamPayload {
        @Override
        public String type() {
            return RESPONSE_DONE;
        }
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record ResponseError(String responseId, ErrorInfo error) implements StreamPayload {
        @Override
        public String type() {
            return RESPONSE_ERROR;
        }
    }

    /** Token counts as providers report them (snake case inside StreamEvents). */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Usage(long promptTokens, long completionTokens, long totalTokens) {
    }
}
