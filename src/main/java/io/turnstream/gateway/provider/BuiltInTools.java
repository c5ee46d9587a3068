package io.turnstream.gateway.provider;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.turnstream.model.Json;
import java.util.List;

/**
 * The tools a model is offered when a turn names none. The tool executor implements them over its
 * workspace; paths are relative to that workspace.
 */
public final class BuiltInTools {

    private static final String PATH = "Path relative to the workspace root.";

    public static final List<ToolDefinition> ALL = List.of(
            new Schema("read_file", "Read a text file of the workspace and return its content.")
                    .required("path", PATH).build(),
            new Schema("list_files", "List the files and directories directly under a directory of the workspace.")
                    .optional("path", "Directory to list, relative to the workspace root; the root when omitted.").build(),
            new Schema("glob", "Find the workspace's files whose path matches a glob pattern, such as src/**/*.java.")
                    .required("pattern", "The glob pattern.")
                    .optional("path", "Directory to search from; the workspace root when omitted.").build(),
            new Schema("grep", "Search the workspace's files for lines matching a regular expression.")
                    .required("pattern", "The regular expression.")
                    .optional("path", "File or directory to search; the whole workspace when omitted.").build(),
            new Schema("write_file", "Create or overwrite a file of the workspace with the given content.")
                    .required("path", PATH)
                    .required("content", "The full new content of the file.").build(),
            new Schema("edit_file", "Replace exactly one occurrence of old_string with new_string in a file of the workspace.")
                    .required("path", PATH)
                    .required("old_string", "The exact text to replace; it must occur exactly once.")
                    .required("new_string", "The replacement text.").build());

    private BuiltInTools() {
    }

    /** A JSON object schema with string properties. */
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
        }

        Schema required(String property, String about) {
            optional(property, about);
            ((ArrayNode) schema.get("required")).add(property);
            return this;
        }

        Schema optional(String property, String about) {
            ((ObjectNode) schema.get("properties")).putObject(property).put("type", "string").put("description", about);
            return this;
        }

        ToolDefinition build() {
            return new ToolDefinition(name, description, schema);
        }
    }
}
