package io.turnstream.gateway.provider;

import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.model.ItemType;
import io.turnstream.model.OutputItem;
import io.turnstream.model.StreamPayload;

/**
 * A tool call the model made in a step, as published in its {@code function_call} item.
 *
 * @param arguments the arguments as JSON text (as the provider sent them; "{}" when empty)
 */
public record ToolCallRequest(String itemId, String callId, String name, String arguments) {

    /**
     * The call's {@code item_done}, which makes the topology publish it to {@code llm.tool-calls}:
     * sent only once the call's step is committed (see {@link StepItems}).
     *
     * @param providerId recorded on the final item
     */
    public StreamPayload.ItemDone itemDone(String providerId) {
        return new StreamPayload.ItemDone(itemId, new OutputItem(itemId, ItemType.FUNCTION_CALL, null, null, name,
                TextNode.valueOf(arguments), callId, null, null, providerId));
    }
}
