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
 * field is authoritative over an earlier one. Numeric fields are merged at the top level and one
 * level down, named {@code parent.child} (OpenAI's {@code input_tokens_details.cached_tokens}).
 */
final class UsageTracker {

    private final Map<String, Long> last = new HashMap<>();

    void merge(JsonNode usage) {
        if (usage == null || !usage.isObject()) {
            return;
        }
        merge("", usage);
        for (Iterator<Map.Entry<String, JsonNode>> it = usage.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> field = it.next();
            if (field.getValue().isObject()) {
                merge(field.getKey() + ".", field.getValue());
            }
        }
    }

    private void merge(String prefix, JsonNode object) {
        for (Iterator<Map.Entry<String, JsonNode>> it = object.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> field = it.next();
            if (field.getValue().isIntegralNumber()) {
                last.put(prefix + field.getKey(), field.getValue().asLong());
            }
        }
    }

    /** Where a protocol reports each count; a null field is one the protocol does not report. */
    record Fields(List<String> prompt, String completion, String total, String cacheRead, String cacheWrite,
                  String reasoning) {
    }

    /** @return null when the stream reported no usage at all */
    Usage usage(Fields fields) {
        if (last.isEmpty()) {
            return null;
        }
        long prompt = fields.prompt().stream().mapToLong(f -> last.getOrDefault(f, 0L)).sum();
        long completion = last.getOrDefault(fields.completion(), 0L);
        Long total = fields.total() == null ? null : last.get(fields.total());
        return new Usage(prompt, completion, total != null ? total : prompt + completion, reported(fields.cacheRead()),
                reported(fields.cacheWrite()), reported(fields.reasoning()), null);
    }

    private Long reported(String field) {
        return field == null ? null : last.get(field);
    }
}
