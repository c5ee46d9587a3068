package io.turnstream.gateway.provider;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.model.StreamPayload.Usage;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * Token counts merged across a stream's events: providers report usage piecemeal (Anthropic's
 * {@code message_start} then {@code message_delta}, OpenAI's final chunk), and a later value of a
 * field is authoritative over an earlier one. Only top-level numeric fields are merged.
 */
final class UsageTracker {

    private final Map<String, Long> last = new HashMap<>();

    void merge(JsonNode usage) {
        if (usage == null || !usage.isObject()) {
            return;
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = usage.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> field = it.next();
            if (field.getValue().isIntegralNumber()) {
                last.put(field.getKey(), field.getValue().asLong());
            }
        }
    }

    /**
     * @param promptFields summed into prompt tokens (Anthropic counts cached input separately)
     * @param totalField the provider's own total, or null to add prompt and completion
     * @return null when the stream reported no usage at all
     */
    Usage usage(List<String> promptFields, String completionField, String totalField) {
        if (last.isEmpty()) {
            return null;
        }
        long prompt = promptFields.stream().mapToLong(f -> last.getOrDefault(f, 0L)).sum();
        long completion = last.getOrDefault(completionField, 0L);
        Long total = totalField == null ? null : last.get(totalField);
        return new Usage(prompt, completion, total != null ? total : prompt + completion);
    }
}
