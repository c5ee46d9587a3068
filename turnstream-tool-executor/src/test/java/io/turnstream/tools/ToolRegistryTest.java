package io.turnstream.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.model.Json;
import java.util.List;
import org.junit.jupiter.api.Test;

class ToolRegistryTest {

    private static final ScriptedTool ECHO = ScriptedTool.safe("echo", (args, context) -> TextNode.valueOf("echo"));

    @Test
    void theBuiltInToolsAreFoundThroughTheServiceLoaderWithTheirDefinitions() throws Exception {
        List<ToolDefinition> definitions = ToolRegistry.installed().definitions();

        assertThat(definitions).extracting(ToolDefinition::name)
                .containsExactly("edit_file", "glob", "grep", "list_files", "read_file", "write_file");
        assertThat(definitions).filteredOn(ToolDefinition::concurrencySafe).extracting(ToolDefinition::name)
                .containsExactly("glob", "grep", "list_files", "read_file");
        JsonNode json = Json.MAPPER.readTree(Json.toString(definitions));
        assertThat(json.get(4).get("name").asText()).isEqualTo("read_file");
        assertThat(json.get(4).get("description").asText()).isNotBlank();
        assertThat(json.get(4).get("inputSchema").get("required").get(0).asText()).isEqualTo("path");
    }

    @Test
    void toolsAddedInCodeJoinTheInstalledOnes() {
        ToolRegistry registry = ToolRegistry.installed().plus(ECHO);

        assertThat(registry.find("echo")).containsSame(ECHO);
        assertThat(registry.definitions()).hasSize(7);
    }

    @Test
    void namesMustBeUniqueAndUsableByModels() {
        assertThatThrownBy(() -> ToolRegistry.installed().plus(ScriptedTool.safe("read_file", (args, context) -> null)))
                .hasMessageContaining("two tools are named 'read_file'");
        assertThatThrownBy(() -> ToolRegistry.of(List.of(ScriptedTool.safe("read file", (args, context) -> null))))
                .hasMessageContaining("invalid name 'read file'");
    }
}
