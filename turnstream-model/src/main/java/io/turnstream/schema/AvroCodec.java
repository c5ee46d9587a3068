package io.turnstream.schema;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import com.fasterxml.jackson.databind.node.DoubleNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.model.Json;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Iterator;
import java.util.List;
import org.apache.avro.AvroRuntimeException;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;

/**
 * Converts the contract's Java records to Avro and back, guided by the schemas. The bridge is the
 * records' JSON form ({@link Json#MAPPER}), whose field names the schemas use verbatim, so the JSON
 * and Avro encodings cannot drift apart: a field the schema lacks is an error, not a silent loss.
 * JSON-valued fields ({@link AvroSchemas#JSON_TEXT}) travel as JSON text; unions of records are
 * resolved by the object's {@code type} ({@link AvroSchemas#UNION_TYPES}).
 */
public final class AvroCodec {

    private AvroCodec() {
    }

    /** Avro binary of a record (no framing). */
    public static byte[] encode(Object value, Schema schema) {
        GenericRecord record = toAvro(value, schema);
        ByteArrayOutputStream out = new ByteArrayOutputStream(256);
        BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(out, null);
        try {
            new GenericDatumWriter<GenericRecord>(schema).write(record, encoder);
            encoder.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    /**
     * Decodes Avro binary written with {@code writer} into a record of {@code type}, resolving it
     * against our {@code reader} schema (Avro schema resolution: added fields take their defaults,
     * removed fields are skipped).
     */
    public static <T> T decode(byte[] bytes, int offset, int length, Schema writer, Schema reader, Class<T> type)
            throws IOException {
        GenericRecord record;
        try {
            record = new GenericDatumReader<GenericRecord>(writer, reader)
                    .read(null, DecoderFactory.get().binaryDecoder(bytes, offset, length, null));
        } catch (AvroRuntimeException | IOException | IndexOutOfBoundsException e) {
            throw new IOException("not Avro binary of " + writer.getFullName() + ": " + e.getMessage(), e);
        }
        return fromAvro(record, type);
    }

    /** The Avro form of a record, checked against the schema. */
    public static GenericRecord toAvro(Object value, Schema schema) {
        return (GenericRecord) toAvro(Json.MAPPER.valueToTree(value), schema, schema.getName());
    }

    /** The Java record of an Avro record read with one of our schemas. */
    public static <T> T fromAvro(GenericRecord record, Class<T> type) throws IOException {
        try {
            return Json.MAPPER.treeToValue(toJson(record, record.getSchema()), type);
        } catch (IllegalArgumentException e) {
            throw new IOException(e.getMessage(), e);
        }
    }

    private static Object toAvro(JsonNode node, Schema schema, String path) {
        if (node == null && schema.getType() != Schema.Type.UNION && schema.getType() != Schema.Type.NULL) {
            throw new IllegalArgumentException(path + " is required");
        }
        return switch (schema.getType()) {
            case RECORD -> recordToAvro(node, schema, path);
            case UNION -> toAvro(node, unionBranch(node, schema, path), path);
            case NULL -> null;
            case STRING -> {
                require(node.isTextual(), path, "a string", node);
                yield node.asText();
            }
            case LONG -> {
                require(node.isIntegralNumber() && node.canConvertToLong(), path, "a whole number", node);
                yield node.asLong();
            }
            case BOOLEAN -> {
                require(node.isBoolean(), path, "true or false", node);
                yield node.asBoolean();
            }
            case DOUBLE -> {
                require(node.isNumber(), path, "a number", node);
                yield node.asDouble();
            }
            default -> throw new IllegalStateException(path + ": Avro type " + schema.getType() + " is not used by our schemas");
        };
    }

    private static GenericRecord recordToAvro(JsonNode node, Schema schema, String path) {
        require(node.isObject(), path, "an object", node);
        for (Iterator<String> names = node.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (schema.getField(name) == null) {
                throw new IllegalArgumentException(path + "." + name + " is not in the Avro schema " + schema.getFullName()
                        + ": add it to schemas/ before writing it");
            }
        }
        GenericData.Record record = new GenericData.Record(schema);
        for (Schema.Field field : schema.getFields()) {
            JsonNode child = node.get(field.name());
            String childPath = path + "." + field.name();
            if (isJsonText(field)) {
                record.put(field.pos(), toAvro(child == null ? null : TextNode.valueOf(Json.toString(child)),
                        field.schema(), childPath));
            } else {
                record.put(field.pos(), toAvro(child == null || child.isNull() ? null : child, field.schema(), childPath));
            }
        }
        return record;
    }

    /** Absent values take the null branch; otherwise the only other branch, or the record listing the object's type. */
    private static Schema unionBranch(JsonNode node, Schema union, String path) {
        List<Schema> branches = union.getTypes();
        if (node == null) {
            return branches.stream().filter(b -> b.getType() == Schema.Type.NULL).findFirst()
                    .orElseThrow(() -> new IllegalArgumentException(path + " is required"));
        }
        List<Schema> present = branches.stream().filter(b -> b.getType() != Schema.Type.NULL).toList();
        if (present.size() == 1) {
            return present.get(0);
        }
        String type = node.path("type").asText(null);
        return present.stream()
                .filter(b -> b.getObjectProp(AvroSchemas.UNION_TYPES) instanceof List<?> types && types.contains(type))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException(path + ".type '" + type + "' selects none of "
                        + present.stream().map(Schema::getName).toList()));
    }

    private static JsonNode toJson(Object value, Schema schema) {
        return switch (schema.getType()) {
            case RECORD -> {
                GenericRecord record = (GenericRecord) value;
                ObjectNode object = JsonNodeFactory.instance.objectNode();
                for (Schema.Field field : schema.getFields()) {
                    Object child = record.get(field.pos());
                    if (child != null) {
                        object.set(field.name(), isJsonText(field)
                                ? parseJsonText(child.toString(), schema.getName() + "." + field.name())
                                : toJson(child, field.schema()));
                    }
                }
                yield object;
            }
            case UNION -> toJson(value, schema.getTypes().get(GenericData.get().resolveUnion(schema, value)));
            case STRING -> TextNode.valueOf(value.toString());
            case LONG -> LongNode.valueOf((Long) value);
            case BOOLEAN -> BooleanNode.valueOf((Boolean) value);
            case DOUBLE -> DoubleNode.valueOf((Double) value);
            default -> throw new IllegalStateException("Avro type " + schema.getType() + " is not used by our schemas");
        };
    }

    private static JsonNode parseJsonText(String text, String path) {
        try {
            return Json.MAPPER.readTree(text);
        } catch (IOException e) {
            throw new IllegalArgumentException(path + " does not hold JSON text: " + e.getMessage());
        }
    }

    private static boolean isJsonText(Schema.Field field) {
        return Boolean.TRUE.equals(field.getObjectProp(AvroSchemas.JSON_TEXT));
    }

    private static void require(boolean condition, String path, String expected, JsonNode actual) {
        if (!condition) {
            throw new IllegalArgumentException(path + " must be " + expected + ", got " + actual);
        }
    }
}
