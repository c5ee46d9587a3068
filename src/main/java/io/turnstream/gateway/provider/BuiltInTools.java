package io.turnstream.gateway.provider;

import io.turnstream.tools.ToolRegistry;
import java.util.List;

/**
 * The tools a model is offered when a turn names none: every tool installed for the tool executor,
 * with the executor's own descriptions and argument schemas, so the two never disagree.
 */
public final class BuiltInTools {

    public static final List<ToolDefinition> ALL = ToolRegistry.installed().definitions().stream()
            .map(tool -> new ToolDefinition(tool.name(), tool.description(), tool.inputSchema()))
            .toList();

    private BuiltInTools() {
    }
}
