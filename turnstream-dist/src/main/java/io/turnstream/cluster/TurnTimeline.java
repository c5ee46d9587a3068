package io.turnstream.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.model.Json;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One turn's records on several topics around a fault, in the order a {@code read_committed} reader read
 * them, each with when it was written and read, in seconds from the SIGKILL: where the turn waited
 * (written late: a producer's; written early, read late: a transaction holding the partition's last
 * stable offset). Runs of one kind (a streamed text's deltas) show as one line with their count.
 */
final class TurnTimeline {

    private record Line(double read, double written, String what) {
    }

    private TurnTimeline() {
    }

    /**
     * @param byTopic per topic, the turn's records (its run's on {@code llm.raw-events})
     * @param fromSeconds, toSeconds the records read in this window, seconds from the kill
     */
    static List<String> of(Map<String, List<TopicFollower.Seen>> byTopic, long killedMillis, long killedNanos,
                           double fromSeconds, double toSeconds) {
        List<Line> lines = new ArrayList<>();
        byTopic.forEach((topic, seen) -> seen.forEach(s -> {
            double read = (s.readNanos() - killedNanos) / 1e9;
            if (read >= fromSeconds && read <= toSeconds) {
                lines.add(new Line(read, (s.record().timestamp() - killedMillis) / 1000.0,
                        topic + "-" + s.record().partition() + " " + summary(s.record().value())));
            }
        }));
        lines.sort(Comparator.comparingDouble(Line::read));
        List<String> text = new ArrayList<>();
        for (int i = 0; i < lines.size(); ) {
            Line first = lines.get(i);
            int j = i + 1;
            while (j < lines.size() && lines.get(j).what().equals(first.what())) {
                j++;
            }
            Line last = lines.get(j - 1);
            text.add(j - i == 1
                    ? String.format(Locale.ROOT, "%+7.2f s read, written %+7.2f s: %s", first.read(), first.written(),
                    first.what())
                    : String.format(Locale.ROOT, "%+7.2f..%+.2f s read, written %+.2f..%+.2f s: %d x %s", first.read(),
                    last.read(), first.written(), last.written(), j - i, first.what()));
            i = j;
        }
        return text;
    }

    /** The fields that tell a record's step: its type, its item's type, its call and tool. */
    static String summary(String value) {
        JsonNode node;
        try {
            node = Json.MAPPER.readTree(value);
        } catch (Exception notJson) {
            return "(not JSON)";
        }
        StringBuilder text = new StringBuilder();
        append(text, node.path("type"));
        append(text, node.path("payload").path("item_type"));
        append(text, node.path("payload").path("item_id"));
        append(text, node.path("payload").path("call_id"));
        append(text, node.path("callId"));
        append(text, node.path("toolName"));
        if (node.has("success")) {
            text.append(text.isEmpty() ? "" : " ").append(node.get("success").asBoolean() ? "success" : "failure");
        }
        return text.isEmpty() ? "(record)" : text.toString();
    }

    private static void append(StringBuilder text, JsonNode field) {
        if (field.isTextual()) {
            text.append(text.isEmpty() ? "" : " ").append(field.asText());
        }
    }
}
