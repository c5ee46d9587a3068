package io.turnstream.tools.builtin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.tools.ToolContext;
import io.turnstream.tools.ToolException;
import io.turnstream.tools.Workspace;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/** Searches the text files of the workspace for a regular expression, line by line. */
public final class GrepTool extends BuiltinTool {

    private static final int MAX_LINE_CHARS = 500;

    public GrepTool() {
        super("grep", "Search file contents for a Java regular expression. Prints 'path:line: text' for every "
                + "matching line; binary files and symbolic links are skipped.", """
                {"type": "object",
                 "properties": {
                   "pattern": {"type": "string", "minLength": 1, "description": "Regular expression (java.util.regex syntax)"},
                   "path": {"type": "string", "description": "File or directory to search, relative to the workspace root (default: the root)"},
                   "glob": {"type": "string", "description": "Only search files whose name or relative path matches this glob, such as '*.java'"},
                   "case_insensitive": {"type": "boolean", "description": "Ignore case (default false)"}},
                 "required": ["pattern"],
                 "additionalProperties": false}""", true);
    }

    @Override
    public JsonNode execute(JsonNode args, ToolContext context) throws IOException, ToolException {
        String expression = text(args, "pattern", null);
        Pattern pattern;
        try {
            pattern = Pattern.compile(expression, flag(args, "case_insensitive") ? Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE : 0);
        } catch (PatternSyntaxException e) {
            throw new ToolException("Invalid regular expression: " + e.getMessage());
        }
        String glob = text(args, "glob", null);
        Predicate<String> include = glob == null ? any -> true : TextFiles.glob(glob);
        Workspace workspace = context.workspace();
        Path base = TextFiles.existingDirectoryOrFile(workspace, text(args, "path", "."));
        int enough = context.limits().maxLines() + 1;
        List<String> matches = new ArrayList<>();
        FileWalk.Visitor search = (file, attributes) -> {
            String relative = workspace.relative(file);
            if (attributes.isRegularFile() && (include.test(file.getFileName().toString()) || include.test(relative))
                    && !TextFiles.isBinary(file)) {
                searchFile(file, relative, pattern, context, matches, enough);
            }
            return matches.size() < enough;
        };
        if (Files.isDirectory(base)) {
            FileWalk.walk(base, Integer.MAX_VALUE, context, search);
        } else {
            search.visit(base, Files.readAttributes(base, java.nio.file.attribute.BasicFileAttributes.class,
                    java.nio.file.LinkOption.NOFOLLOW_LINKS));
        }
        return TextNode.valueOf(matches.isEmpty() ? "No matches for '" + expression + "'" : String.join("\n", matches));
    }

    private static void searchFile(Path file, String relative, Pattern pattern, ToolContext context,
                                   List<String> matches, int enough) throws IOException {
        try (BufferedReader reader = new BufferedReader(TextFiles.reader(file))) {
            String line;
            int number = 0;
            while ((line = reader.readLine()) != null && matches.size() < enough) {
                number++;
                if (pattern.matcher(new Interruptible(line, context)).find()) {
                    String shown = line.length() > MAX_LINE_CHARS ? line.substring(0, MAX_LINE_CHARS) + "..." : line;
                    matches.add(relative + ":" + number + ": " + shown);
                }
            }
        }
    }

    /** A line that checks for cancellation while a regular expression scans it: backtracking can take forever. */
    private record Interruptible(String text, ToolContext context) implements CharSequence {
        @Override
        public int length() {
            return text.length();
        }

        @Override
        public char charAt(int index) {
            context.checkCancelled();
            return text.charAt(index);
        }

        @Override
        public CharSequence subSequence(int start, int end) {
            return new Interruptible(text.substring(start, end), context);
        }

        @Override
        public String toString() {
            return text;
        }
    }
}
