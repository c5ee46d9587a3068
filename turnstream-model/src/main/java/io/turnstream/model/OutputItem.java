package io.turnstream.model;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;

/**
 * A finished item as carried by {@code item_done.final_item}. {@code arguments} and {@code output}
 * may be JSON text (as providers send them) or JSON values. {@code type} stays the text the producer
 * wrote, as {@code item_start.item_type} does; the item's type is the one its {@code item_start} named.
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
public record OutputItem(String id, String type, String content, String origin, String name,
                         JsonNode arguments, String callId, JsonNode output, Boolean success,
                         String providerId) {

    public OutputItem(String id, ItemType type, String content, String origin, String name,
                      JsonNode arguments, String callId, JsonNode output, Boolean success, String providerId) {
        this(id, type.wire(), content, origin, name, arguments, callId, output, success, providerId);
    }

    /** {@code type} as an {@link ItemType}, or null when it is not one of the contract. */
    @JsonIgnore
    public ItemType knownType() {
        return ItemType.fromWire(type);
    }
}
