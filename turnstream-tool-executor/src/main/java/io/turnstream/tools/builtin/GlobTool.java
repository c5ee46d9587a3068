package io.turnstream.tools.builtin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.tools.ToolContext;
import io.turnstream.tools.ToolException;
import io.turnstream.tools.Workspace;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/** Finds workspace files whose path matches a glob pattern. */
public final class GlobTool extends BuiltinTool {

    public GlobTool() {
        super("glob", "Find files by glob pattern, such as '**/*.java' or 'src/*/test/**'. The pattern matches "
                + "paths relative to the search directory; results are workspace-relative, sorted.", """
                {"type": "object",
                 "properties": {
                   "pattern": {"type": "string", "minLength": 1, "description": "Glob pattern: * within a name, ** across directories, ? one character, {a,b} alternatives"},
                   "path": {"type": "string", "description": "Directory to search, relative to the workspace root (default: the root)"}},
                 "required": ["pattern"],
                 "additionalProperties": false}""", true);
    }

    @Override
    public JsonNode execute(JsonNode args, ToolContext context) throws IOException, ToolException {
        String pattern = text(args, "pattern", null);
        Predicate<String> matches = TextFiles.glob(pattern);
        Workspace workspace = context.workspace();
        Path base = TextFiles.existingDirectoryOrFile(workspace, text(args, "path", "."));
        int enough = context.limits().maxLines() + 1;
        List<String> found = new ArrayList<>();
        FileWalk.walk(base, Integer.MAX_VALUE, context, (entry, attributes) -> {
            if (attributes.isRegularFile() && matches.test(base.relativize(entry).toString())) {
                found.add(workspace.relative(entry));
            }
            return found.size() < enough;
        });
        return TextNode.valueOf(found.isEmpty() ? "No files match '" + pattern + "'" : String.join("\n", found));
    }
}
