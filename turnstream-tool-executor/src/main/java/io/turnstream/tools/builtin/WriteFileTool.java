package io.turnstream.tools.builtin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.tools.ToolContext;
import io.turnstream.tools.ToolException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Creates or replaces a text file of the workspace, creating missing parent directories. */
public final class WriteFileTool extends BuiltinTool {

    public WriteFileTool() {
        super("write_file", "Write a UTF-8 text file in the workspace, replacing it if it exists and creating "
                + "missing parent directories.", """
                {"type": "object",
                 "properties": {
                   "path": {"type": "string", "minLength": 1, "description": "File path, relative to the workspace root"},
                   "content": {"type": "string", "description": "The complete new content of the file"}},
                 "required": ["path", "content"],
                 "additionalProperties": false}""", false);
    }

    @Override
    public JsonNode execute(JsonNode args, ToolContext context) throws IOException, ToolException {
        String path = text(args, "path", null);
        Path file = context.workspace().resolve(path);
        if (Files.isDirectory(file)) {
            throw new ToolException("'" + path + "' is a directory");
        }
        byte[] content = text(args, "content", "").getBytes(StandardCharsets.UTF_8);
        boolean existed = Files.exists(file);
        context.checkCancelled();
        Files.createDirectories(file.getParent());
        context.write(file, content);
        return TextNode.valueOf((existed ? "Overwrote " : "Created ") + context.workspace().relative(file)
                + " (" + content.length + " bytes)");
    }
}
