package io.turnstream.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;

/**
 * A finished item as carried by {@code item_done.final_item}. {@code arguments} and {@code output}
 * may be JSON text (as providers send them) or JSON values.
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
public record OutputItem(String id, String type, String content, String origin, String name,
                         JsonNode arguments, String callId, JsonNode output, Boolean success,
                         String providerId) {
}
