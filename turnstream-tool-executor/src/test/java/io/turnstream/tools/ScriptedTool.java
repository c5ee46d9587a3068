package io.turnstream.tools;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.time.Duration;
import java.util.Optional;

/** A test tool whose behaviour is a lambda: latches, barriers, crashes, whatever a test needs. */
final class ScriptedTool implements Tool {

    interface Body {
        JsonNode run(JsonNode arguments, ToolContext context) throws Exception;
    }

    private final String name;
    private final boolean safe;
    private final Body body;
    private final Duration timeout;

    private ScriptedTool(String name, boolean safe, Duration timeout, Body body) {
        this.name = name;
        this.safe = safe;
        this.timeout = timeout;
        this.body = body;
    }

    static ScriptedTool safe(String name, Body body) {
        return new ScriptedTool(name, true, null, body);
    }

    static ScriptedTool unsafe(String name, Body body) {
        return new ScriptedTool(name, false, null, body);
    }

    ScriptedTool withTimeout(Duration timeout) {
        return new ScriptedTool(name, safe, timeout, body);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String description() {
        return "test tool " + name;
    }

    @Override
    public JsonNode inputSchema() {
        return JsonNodeFactory.instance.objectNode().put("type", "object");
    }

    @Override
    public boolean concurrencySafe() {
        return safe;
    }

    @Override
    public Optional<Duration> timeout() {
        return Optional.ofNullable(timeout);
    }

    @Override
    public JsonNode execute(JsonNode arguments, ToolContext context) throws Exception {
        return body.run(arguments, context);
    }
}
