package io.turnstream.tools.builtin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.tools.ToolContext;
import io.turnstream.tools.ToolException;
import io.turnstream.tools.Workspace;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Lists a directory of the workspace: directories end in {@code /}, symbolic links in {@code @}. */
public final class ListFilesTool extends BuiltinTool {

    public ListFilesTool() {
        super("list_files", "List the entries of a workspace directory (paths relative to the workspace root; "
                + "directories end in '/', symbolic links in '@'), in name order. Set recursive to list the whole tree.", """
                {"type": "object",
                 "properties": {
                   "path": {"type": "string", "description": "Directory, relative to the workspace root (default: the root)"},
                   "recursive": {"type": "boolean", "description": "List subdirectories too (default false)"}},
                 "additionalProperties": false}""", true);
    }

    @Override
    public JsonNode execute(JsonNode args, ToolContext context) throws IOException, ToolException {
        String path = text(args, "path", ".");
        Workspace workspace = context.workspace();
        Path dir = TextFiles.existingDirectoryOrFile(workspace, path);
        if (!Files.isDirectory(dir)) {
            throw new ToolException("'" + path + "' is a file, not a directory");
        }
        int enough = context.limits().maxLines() + 1;
        List<String> entries = new ArrayList<>();
        FileWalk.walk(dir, flag(args, "recursive") ? Integer.MAX_VALUE : 1, context, (entry, attributes) -> {
            String suffix = attributes.isDirectory() ? "/" : attributes.isSymbolicLink() ? "@" : "";
            entries.add(workspace.relative(entry) + suffix);
            return entries.size() < enough;
        });
        return TextNode.valueOf(entries.isEmpty() ? "(empty directory)" : String.join("\n", entries));
    }
}
