package io.turnstream.gateway.provider;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.turnstream.model.Json;
import java.util.List;

/**
 * The tools a model is offered when a turn names none. The tool executor implements them over its
 * workspace; paths are relative to that workspace. The schemas match the executor's own.
 */
public final class BuiltInTools {

    private static final String PATH = "File path, relative to the workspace root.";
    private static final String STRING = "string";
    private static final String INTEGER = "integer";
    private static final String BOOLEAN = "boolean";

    public static final List<ToolDefinition> ALL = List.of(
            new Schema("read_file", "Read a UTF-8 text file of the workspace. Long files come a window at a time: "
                    + "page through them with offset and limit.")
                    .required("path", STRING, PATH)
                    .optional("offset", INTEGER, "First line to read, 1-based (default 1).")
                    .optional("limit", INTEGER, "Most lines to read.").build(),
            new Schema("list_files", "List the entries of a workspace directory, in name order; directories end "
                    + "in '/'.")
                    .optional("path", STRING, "Directory, relative to the workspace root (default: the root).")
                    .optional("recursive", BOOLEAN, "List subdirectories too (default false).").build(),
            new Schema("glob", "Find the workspace's files whose path matches a glob pattern, such as src/**/*.java.")
                    .required("pattern", STRING, "The glob pattern: * within a name, ** across directories.")
                    .optional("path", STRING, "Directory to search, relative to the workspace root (default: the root).")
                    .build(),
            new Schema("grep", "Search the workspace's files for lines matching a regular expression.")
                    .required("pattern", STRING, "The regular expression.")
                    .optional("path", STRING, "File or directory to search (default: the whole workspace).")
                    .optional("glob", STRING, "Only search files matching this glob, such as '*.java'.")
                    .optional("case_insensitive", BOOLEAN, "Ignore case (default false).").build(),
            new Schema("write_file", "Create or overwrite a file of the workspace with the given content.")
                    .required("path", STRING, PATH)
                    .required("content", STRING, "The complete new content of the file.").build(),
            new Schema("edit_file", "Replace exactly one occurrence of old_string with new_string in a file of the "
                    + "workspace (or every occurrence, with replace_all).")
                    .required("path", STRING, PATH)
                    .required("old_string", STRING, "The exact text to replace.")
                    .required("new_string", STRING, "The text to put in its place.")
                    .optional("replace_all", BOOLEAN, "Replace every occurrence (default false).").build());

    private BuiltInTools() {
    }

    /** A JSON object schema that accepts only the properties it names. */
    private static final class Schema {
        private final String name;
        private final String description;
        private final ObjectNode schema = Json.MAPPER.createObjectNode();

        Schema(String name, String description) {
            this.name = name;
            this.description = description;
            schema.put("type", "object");
            schema.putObject("properties");
            schema.putArray("required");
            schema.put("additionalProperties", false);
        }

        Schema required(String property, String type, String about) {
            optional(property, type, about);
            ((ArrayNode) schema.get("required")).add(property);
            return this;
        }

        Schema optional(String property, String type, String about) {
            ((ObjectNode) schema.get("properties")).putObject(property).put("type", type).put("description", about);
            return this;
        }

        ToolDefinition build() {
            return new ToolDefinition(name, description, schema);
        }
    }
}
