package io.turnstream.schema;

import io.turnstream.model.ControlMessage;
import io.turnstream.model.ItemAppend;
import io.turnstream.model.PublishedTool;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.ToolCall;
import io.turnstream.model.ToolResult;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.model.UpsertEnvelope;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.avro.Schema;

/**
 * The Avro schemas of the contract's topic values, one self-contained {@code .avsc} per record type
 * in {@code schemas/} at the repository root (packaged on the classpath under the same path).
 */
public final class AvroSchemas {

    /** Field property: the string holds JSON text (a JSON-valued field of the Java record). */
    public static final String JSON_TEXT = "turnstream.json";
    /** Record property on a union branch: the {@code type} values that select this branch. */
    public static final String UNION_TYPES = "turnstream.types";

    /** Schema file name per record type, in the order of the contract's topic table. */
    public static final Map<Class<?>, String> FILES = orderedFiles();

    private static final Map<Class<?>, Schema> BY_TYPE = loadAll();

    private AvroSchemas() {
    }

    /** The schema of a topic value type; throws when the type is not one of the contract's records. */
    public static Schema of(Class<?> type) {
        Schema schema = BY_TYPE.get(type);
        if (schema == null) {
            throw new IllegalArgumentException("no Avro schema for " + type.getName()
                    + "; the records with schemas are " + FILES.keySet().stream().map(Class::getSimpleName).toList());
        }
        return schema;
    }

    /** Parses one self-contained schema document. */
    public static Schema parse(InputStream in) throws IOException {
        return new Schema.Parser().parse(in);
    }

    private static Map<Class<?>, String> orderedFiles() {
        Map<Class<?>, String> files = new LinkedHashMap<>();
        files.put(StreamEvent.class, "StreamEvent.avsc");
        files.put(UpsertEnvelope.class, "UpsertEnvelope.avsc");
        files.put(ToolCall.class, "ToolCall.avsc");
        files.put(ToolResult.class, "ToolResult.avsc");
        files.put(ControlMessage.class, "ControlMessage.avsc");
        files.put(ItemAppend.class, "ItemAppend.avsc");
        files.put(PublishedTool.class, "PublishedTool.avsc");
        files.put(TurnRequestRecord.class, "TurnRequestRecord.avsc");
        return Collections.unmodifiableMap(files);
    }

    private static Map<Class<?>, Schema> loadAll() {
        Map<Class<?>, Schema> schemas = new LinkedHashMap<>();
        FILES.forEach((type, file) -> schemas.put(type, load("schemas/" + file)));
        return Map.copyOf(schemas);
    }

    private static Schema load(String resource) {
        try (InputStream in = AvroSchemas.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException(resource + " is not on the classpath");
            }
            return parse(in);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + resource, e);
        }
    }
}
