package io.turnstream.tools.builtin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.tools.OutputLimits;
import io.turnstream.tools.ToolContext;
import io.turnstream.tools.ToolException;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;

/** Reads a text file of the workspace, a window of lines at a time. */
public final class ReadFileTool extends BuiltinTool {

    /** Room left under the output limits for the continuation notice. */
    private static final int NOTICE_BYTES = 256;

    public ReadFileTool() {
        super("read_file", "Read a UTF-8 text file of the workspace. Long files are returned a window at a time: "
                + "use offset (first line, 1-based) and limit (number of lines) to page through them.", """
                {"type": "object",
                 "properties": {
                   "path": {"type": "string", "description": "File path, relative to the workspace root"},
                   "offset": {"type": "integer", "minimum": 1, "description": "First line to read, 1-based (default 1)"},
                   "limit": {"type": "integer", "minimum": 1, "description": "Most lines to read"}},
                 "required": ["path"],
                 "additionalProperties": false}""", true);
    }

    @Override
    public JsonNode execute(JsonNode args, ToolContext context) throws IOException, ToolException {
        String path = text(args, "path", null);
        Path file = TextFiles.existingFile(context.workspace(), path);
        if (TextFiles.isBinary(file)) {
            throw new ToolException("'" + path + "' is a binary file (" + Files.size(file) + " bytes); read_file reads text only");
        }
        OutputLimits limits = context.limits();
        int offset = number(args, "offset", 1);
        int maxLines = Math.min(number(args, "limit", Integer.MAX_VALUE), Math.max(1, limits.maxLines() - 1));
        int maxBytes = Math.max(1, limits.maxBytes() - NOTICE_BYTES);

        StringBuilder out = new StringBuilder();
        int line = 1;
        int linesTaken = 0;
        int bytesTaken = 0;
        boolean more = false;
        try (Reader reader = TextFiles.reader(file)) {
            char[] buffer = new char[8192];
            int n;
            read:
            while ((n = reader.read(buffer)) != -1) {
                context.checkCancelled();
                for (int i = 0; i < n; i++) {
                    char c = buffer[i];
                    if (line >= offset) {
                        int size = c < 0x80 ? 1 : c < 0x800 || Character.isSurrogate(c) ? 2 : 3;
                        if (linesTaken == maxLines || bytesTaken + size > maxBytes) {
                            more = true;
                            break read;
                        }
                        out.append(c);
                        bytesTaken += size;
                        if (c == '\n') {
                            linesTaken++;
                        }
                    }
                    if (c == '\n') {
                        line++;
                    }
                }
            }
        }
        if (offset > 1 && out.isEmpty() && !more) {
            throw new ToolException("offset " + offset + " is past the end of '" + path + "'");
        }
        if (more) {
            if (!out.isEmpty() && out.charAt(out.length() - 1) != '\n') {
                out.append('\n');
            }
            out.append("[file continues: call read_file with offset=").append(line).append(" to read on]");
        }
        return TextNode.valueOf(out.toString());
    }
}
