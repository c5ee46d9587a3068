package io.turnstream.gateway.provider;

import io.turnstream.tools.ToolRegistry;
import java.util.List;

/** The tool executor's installed tools as a model is offered them, for tests that need a realistic tool list. */
public final class InstalledTools {

    public static final List<ToolDefinition> ALL = ToolRegistry.installed().definitions().stream()
            .map(tool -> new ToolDefinition(tool.name(), tool.description(), tool.inputSchema()))
            .toList();

    private InstalledTools() {
    }
}
