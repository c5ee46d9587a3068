package io.turnstream.schema;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.model.ControlMessage;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.avro.Schema;
import org.apache.avro.SchemaCompatibility;
import org.apache.avro.SchemaCompatibility.SchemaCompatibilityResult;
import org.apache.avro.SchemaCompatibility.SchemaCompatibilityType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * BACKWARD compatibility, the registry's default: consumers on the current schemas must read every
 * record written with the last released ones. {@code schemas/released/} holds the released copies;
 * a change that breaks them fails the build until it is made compatible (or released as a new topic).
 */
class SchemaEvolutionTest {

    /** The repository's {@code schemas/released}; tests run in the module's directory. */
    private static final Path RELEASED = Path.of("..", "schemas", "released");

    static Stream<Map.Entry<Class<?>, String>> schemaFiles() {
        return AvroSchemas.FILES.entrySet().stream();
    }

    @ParameterizedTest
    @MethodSource("schemaFiles")
    void currentSchemaReadsWhatTheReleasedOneWrote(Map.Entry<Class<?>, String> file) throws IOException {
        Schema released = released(file.getValue());
        Schema current = AvroSchemas.of(file.getKey());

        SchemaCompatibilityResult result = backward(current, released);

        assertThat(result.getCompatibility())
                .as("%s is not backward compatible with schemas/released/%s: %s", file.getValue(), file.getValue(),
                        describe(result))
                .isEqualTo(SchemaCompatibilityType.COMPATIBLE);
    }

    @Test
    void theCheckRejectsANewRequiredFieldWithoutDefault() {
        Schema released = AvroSchemas.of(ControlMessage.class);
        Schema breaking = new Schema.Parser().parse(released.toString()
                .replace("\"fields\":[", "\"fields\":[{\"name\":\"requestedBy\",\"type\":\"string\"},"));

        SchemaCompatibilityResult result = backward(breaking, released);

        assertThat(result.getCompatibility()).isEqualTo(SchemaCompatibilityType.INCOMPATIBLE);
        assertThat(describe(result)).contains("requestedBy");
    }

    @Test
    void theCheckAcceptsANewOptionalFieldWithDefault() {
        Schema released = AvroSchemas.of(ControlMessage.class);
        Schema evolved = new Schema.Parser().parse(released.toString().replace("\"fields\":[",
                "\"fields\":[{\"name\":\"requestedBy\",\"type\":[\"null\",\"string\"],\"default\":null},"));

        assertThat(backward(evolved, released).getCompatibility()).isEqualTo(SchemaCompatibilityType.COMPATIBLE);
    }

    private static SchemaCompatibilityResult backward(Schema reader, Schema writer) {
        return SchemaCompatibility.checkReaderWriterCompatibility(reader, writer).getResult();
    }

    private static String describe(SchemaCompatibilityResult result) {
        return result.getIncompatibilities().stream()
                .map(i -> i.getType() + " at " + i.getLocation() + ": " + i.getMessage())
                .collect(Collectors.joining("; "));
    }

    private static Schema released(String file) throws IOException {
        Path path = RELEASED.resolve(file);
        assertThat(path).as("every schema has a released copy in schemas/released/").exists();
        try (InputStream in = Files.newInputStream(path)) {
            return AvroSchemas.parse(in);
        }
    }
}
