package io.turnstream.tools;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.nio.charset.StandardCharsets;

/**
 * The most output one tool call passes on to the model. Longer output is cut at a line or UTF-8
 * character boundary and ends with a notice that says so, so the model never mistakes a cut
 * listing for a complete one.
 */
public record OutputLimits(int maxBytes, int maxLines) {

    public OutputLimits {
        if (maxBytes < 1 || maxLines < 1) {
            throw new IllegalArgumentException("output limits must be positive, got " + maxBytes + " bytes and " + maxLines + " lines");
        }
    }

    /** Text output capped; any other JSON passes when its serialised form fits, otherwise becomes capped text. */
    public JsonNode cap(JsonNode output) {
        if (output == null || output.isNull()) {
            return TextNode.valueOf("");
        }
        if (output.isTextual()) {
            String text = output.asText();
            String capped = cap(text);
            return capped == text ? output : TextNode.valueOf(capped);
        }
        String json = output.toString();
        return json.getBytes(StandardCharsets.UTF_8).length <= maxBytes ? output : TextNode.valueOf(cap(json));
    }

    /** The text itself when it is within the limits, otherwise its head and the truncation notice. */
    public String cap(String text) {
        int end = 0;
        int lines = 0;
        int bytes = 0;
        while (end < text.length()) {
            int codePoint = text.codePointAt(end);
            int size = utf8Length(codePoint);
            if (bytes + size > maxBytes) {
                return truncated(text, end);
            }
            if (codePoint == '\n' && ++lines == maxLines && end + 1 < text.length()) {
                return truncated(text, end + 1);
            }
            bytes += size;
            end += Character.charCount(codePoint);
        }
        return text;
    }

    private String truncated(String text, int end) {
        String head = text.substring(0, end);
        return head + (head.endsWith("\n") || head.isEmpty() ? "" : "\n")
                + "[output truncated: the limit is " + maxLines + " lines and " + maxBytes
                + " bytes; narrow the request (a smaller path, a stricter pattern, an offset) to see the rest]";
    }

    private static int utf8Length(int codePoint) {
        if (codePoint < 0x80) {
            return 1;
        }
        if (codePoint < 0x800) {
            return 2;
        }
        return codePoint < 0x10000 ? 3 : 4;
    }
}
