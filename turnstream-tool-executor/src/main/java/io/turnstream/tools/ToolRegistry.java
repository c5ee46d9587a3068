package io.turnstream.tools;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.networknt.schema.Error;
import io.turnstream.model.Json;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.TreeMap;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/** The tools the executor knows, by name, each with its compiled argument schema. */
public final class ToolRegistry {

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_-]{1,64}");
    private static final SchemaRegistry SCHEMAS = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12);

    private final Map<String, Registered> tools;

    private record Registered(Tool tool, Schema schema) {
    }

    private ToolRegistry(Collection<? extends Tool> tools) {
        Map<String, Registered> byName = new TreeMap<>();
        for (Tool tool : tools) {
            String name = tool.name();
            if (name == null || !NAME.matcher(name).matches()) {
                throw new IllegalArgumentException("tool " + tool.getClass().getName() + " has an invalid name '" + name
                        + "': use 1 to 64 letters, digits, '_' or '-'");
            }
            Registered previous = byName.put(name, new Registered(tool, compile(tool)));
            if (previous != null) {
                throw new IllegalArgumentException("two tools are named '" + name + "': "
                        + previous.tool().getClass().getName() + " and " + tool.getClass().getName());
            }
        }
        this.tools = Collections.unmodifiableMap(byName);
    }

    /** Every tool on the class path: the built-ins and any listed in {@code META-INF/services/io.turnstream.tools.Tool}. */
    public static ToolRegistry installed() {
        return of(ServiceLoader.load(Tool.class).stream().map(ServiceLoader.Provider::get).toList());
    }

    public static ToolRegistry of(Collection<? extends Tool> tools) {
        return new ToolRegistry(tools);
    }

    /** This registry plus more tools (names must stay unique). */
    public ToolRegistry plus(Tool... more) {
        return of(Stream.concat(tools.values().stream().map(Registered::tool), Stream.of(more)).toList());
    }

    public Optional<Tool> find(String name) {
        return Optional.ofNullable(name).map(tools::get).map(Registered::tool);
    }

    /** Name, description, schema and concurrency safety of every tool, sorted by name: what the gateway offers the model. */
    public List<ToolDefinition> definitions() {
        return tools.values().stream().map(r -> ToolDefinition.of(r.tool())).toList();
    }

    /**
     * The arguments as a JSON object ready for the tool, or the reasons they are not acceptable. Missing
     * arguments and an empty string count as {@code {}}, as providers send them for tools without parameters;
     * a JSON object sent as text is parsed.
     */
    ArgumentCheck check(Tool tool, JsonNode arguments) {
        JsonNode args = arguments == null || arguments.isNull() || (arguments.isTextual() && arguments.asText().isBlank())
                ? JsonNodeFactory.instance.objectNode() : Json.parseOrText(arguments);
        if (!args.isObject()) {
            return ArgumentCheck.invalid("arguments must be a JSON object, got " + describe(args));
        }
        List<String> problems = new ArrayList<>();
        for (Error error : tools.get(tool.name()).schema().validate(args)) {
            problems.add(error.toString());
        }
        return problems.isEmpty() ? ArgumentCheck.valid(args) : ArgumentCheck.invalid(String.join("; ", problems));
    }

    record ArgumentCheck(JsonNode arguments, String problem) {
        static ArgumentCheck valid(JsonNode arguments) {
            return new ArgumentCheck(arguments, null);
        }

        static ArgumentCheck invalid(String problem) {
            return new ArgumentCheck(null, problem);
        }

        boolean ok() {
            return problem == null;
        }
    }

    private static Schema compile(Tool tool) {
        JsonNode schema = tool.inputSchema();
        if (schema == null || !schema.isObject()) {
            throw new IllegalArgumentException("tool '" + tool.name() + "' must declare its input schema as a JSON object");
        }
        try {
            return SCHEMAS.getSchema(schema);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("tool '" + tool.name() + "' declares an invalid input schema: " + e.getMessage(), e);
        }
    }

    private static String describe(JsonNode value) {
        String text = value.toString();
        return value.getNodeType().name().toLowerCase(Locale.ROOT) + " " + (text.length() > 80 ? text.substring(0, 80) + "..." : text);
    }
}
