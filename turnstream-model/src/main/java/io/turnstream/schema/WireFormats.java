package io.turnstream.schema;

import io.turnstream.model.WireFormat;
import io.turnstream.runtime.Settings;
import java.util.Locale;

/** Chooses the wire format from settings: {@code turnstream.serde.format=json|avro} (JSON by default). */
public final class WireFormats {

    public static final String FORMAT_CONFIG = "turnstream.serde.format";
    /** As Confluent's serializers name it: when false, schemas must be registered beforehand. */
    public static final String AUTO_REGISTER_CONFIG = "auto.register.schemas";

    private WireFormats() {
    }

    public static WireFormat from(Settings settings) {
        String format = settings.get(FORMAT_CONFIG, "json").strip().toLowerCase(Locale.ROOT);
        return switch (format) {
            case "json" -> WireFormat.JSON;
            case "avro" -> avro(settings);
            default -> throw new IllegalArgumentException(FORMAT_CONFIG + " must be json or avro, got '" + format + "'");
        };
    }

    private static WireFormat avro(Settings settings) {
        String url = settings.get(SchemaRegistryClient.URL_CONFIG, "");
        if (url.isBlank()) {
            throw new IllegalArgumentException(FORMAT_CONFIG + "=avro needs " + SchemaRegistryClient.URL_CONFIG
                    + " (for example http://localhost:8081)");
        }
        String autoRegister = settings.get(AUTO_REGISTER_CONFIG, "true").strip().toLowerCase(Locale.ROOT);
        if (!autoRegister.equals("true") && !autoRegister.equals("false")) {
            throw new IllegalArgumentException(AUTO_REGISTER_CONFIG + " must be true or false, got '" + autoRegister + "'");
        }
        SchemaRegistryClient registry = new SchemaRegistryClient(url,
                settings.get(SchemaRegistryClient.BASIC_AUTH_USER_INFO_CONFIG, null));
        return new AvroWireFormat(registry, Boolean.parseBoolean(autoRegister));
    }
}
