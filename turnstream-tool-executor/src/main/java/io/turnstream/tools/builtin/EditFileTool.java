package io.turnstream.tools.builtin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.tools.ToolContext;
import io.turnstream.tools.ToolException;
import java.io.IOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Replaces an exact piece of text in a workspace file. */
public final class EditFileTool extends BuiltinTool {

    public EditFileTool() {
        super("edit_file", "Replace exact text in a UTF-8 file of the workspace. old_string must occur exactly once "
                + "(include surrounding lines to make it unique) unless replace_all is true.", """
                {"type": "object",
                 "properties": {
                   "path": {"type": "string", "minLength": 1, "description": "File path, relative to the workspace root"},
                   "old_string": {"type": "string", "minLength": 1, "description": "The exact text to replace"},
                   "new_string": {"type": "string", "description": "The text to put in its place"},
                   "replace_all": {"type": "boolean", "description": "Replace every occurrence (default false)"}},
                 "required": ["path", "old_string", "new_string"],
                 "additionalProperties": false}""", false);
    }

    @Override
    public JsonNode execute(JsonNode args, ToolContext context) throws IOException, ToolException {
        String path = text(args, "path", null);
        String oldText = text(args, "old_string", null);
        String newText = text(args, "new_string", null);
        if (oldText.equals(newText)) {
            throw new ToolException("old_string and new_string are the same; nothing to change");
        }
        Path file = TextFiles.existingFile(context.workspace(), path);
        String content;
        try {
            content = Files.readString(file, StandardCharsets.UTF_8);
        } catch (CharacterCodingException e) {
            throw new ToolException("'" + path + "' is not UTF-8 text; edit_file edits text files only");
        }
        int occurrences = count(content, oldText);
        if (occurrences == 0) {
            throw new ToolException("old_string was not found in '" + path + "'");
        }
        boolean replaceAll = flag(args, "replace_all");
        if (occurrences > 1 && !replaceAll) {
            throw new ToolException("old_string occurs " + occurrences + " times in '" + path
                    + "'; add surrounding text to make it unique, or set replace_all");
        }
        // exactly one occurrence unless replace_all, so replacing all of them is right in both cases
        String edited = content.replace(oldText, newText);
        context.checkCancelled();
        context.write(file, edited.getBytes(StandardCharsets.UTF_8));
        return TextNode.valueOf("Replaced " + occurrences + (occurrences == 1 ? " occurrence" : " occurrences")
                + " in " + context.workspace().relative(file));
    }

    private static int count(String text, String part) {
        int count = 0;
        for (int at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + part.length())) {
            count++;
        }
        return count;
    }
}
