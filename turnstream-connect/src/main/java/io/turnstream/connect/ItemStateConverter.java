package io.turnstream.connect;

import io.turnstream.model.ErrorInfo;
import io.turnstream.model.Json;
import io.turnstream.model.UIStatus;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UpsertEnvelope;
import io.turnstream.model.WireFormat;
import io.turnstream.model.WireValue;
import io.turnstream.runtime.Settings;
import io.turnstream.schema.WireFormats;
import java.io.IOException;
import java.util.Date;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.data.Timestamp;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.storage.Converter;

/**
 * Reads {@code llm.item-state} values (an {@link UpsertEnvelope} in our JSON or Avro wire format,
 * chosen by {@code turnstream.serde.format} in the converter's config) and flattens each into one
 * typed table row, so a JDBC sink can upsert it. Turn lifecycle records become the row with
 * {@code item_id = "turn"}, as their key {@code {turnId}/turn} says. A value that is not an
 * envelope is a {@link DataException}, which Connect routes to the dead-letter topic.
 */
public final class ItemStateConverter implements Converter {

    /** The item id of a turn's lifecycle row. */
    public static final String TURN_ROW_ITEM_ID = "turn";

    /** Debezium's semantic name for JSON text: its JDBC sink binds it to a json/jsonb column. */
    private static final Schema JSON_TEXT = SchemaBuilder.string().optional().name("io.debezium.data.Json").version(1).build();

    public static final Schema ROW = SchemaBuilder.struct().name("io.turnstream.ItemStateRow").version(1)
            .field("turn_id", Schema.STRING_SCHEMA)
            .field("item_id", Schema.STRING_SCHEMA)
            .field("tenant_id", Schema.OPTIONAL_STRING_SCHEMA)
            .field("thread_id", Schema.OPTIONAL_STRING_SCHEMA)
            .field("event_type", Schema.STRING_SCHEMA)
            .field("item_type", Schema.OPTIONAL_STRING_SCHEMA)
            .field("change_type", Schema.OPTIONAL_STRING_SCHEMA)
            .field("version", Schema.OPTIONAL_INT64_SCHEMA)
            .field("content", Schema.OPTIONAL_STRING_SCHEMA)
            .field("origin", Schema.OPTIONAL_STRING_SCHEMA)
            .field("provider_id", Schema.OPTIONAL_STRING_SCHEMA)
            .field("model_id", Schema.OPTIONAL_STRING_SCHEMA)
            .field("tool_name", Schema.OPTIONAL_STRING_SCHEMA)
            .field("tool_arguments", JSON_TEXT)
            .field("call_id", Schema.OPTIONAL_STRING_SCHEMA)
            .field("tool_output", JSON_TEXT)
            .field("success", Schema.OPTIONAL_BOOLEAN_SCHEMA)
            .field("status", Schema.OPTIONAL_STRING_SCHEMA)
            .field("prompt_tokens", Schema.OPTIONAL_INT64_SCHEMA)
            .field("completion_tokens", Schema.OPTIONAL_INT64_SCHEMA)
            .field("total_tokens", Schema.OPTIONAL_INT64_SCHEMA)
            .field("error_code", Schema.OPTIONAL_STRING_SCHEMA)
            .field("error_message", Schema.OPTIONAL_STRING_SCHEMA)
            .field("seq", Schema.INT64_SCHEMA)
            .field("event_id", Schema.STRING_SCHEMA)
            .field("updated_at", Timestamp.SCHEMA)
            .build();

    private WireFormat wireFormat;

    @Override
    public void configure(Map<String, ?> configs, boolean isKey) {
        if (isKey) {
            throw new ConfigException(getClass().getSimpleName() + " converts item-state values; keys are plain strings "
                    + "(key.converter=org.apache.kafka.connect.storage.StringConverter)");
        }
        Properties props = new Properties();
        configs.forEach((key, value) -> props.setProperty(key, String.valueOf(value)));
        try {
            wireFormat = WireFormats.from(Settings.of(props));
        } catch (IllegalArgumentException e) {
            throw new ConfigException(e.getMessage());
        }
    }

    @Override
    public byte[] fromConnectData(String topic, Schema schema, Object value) {
        throw new DataException(getClass().getSimpleName() + " only reads llm.item-state for sinks; it does not write records");
    }

    @Override
    public SchemaAndValue toConnectData(String topic, byte[] value) {
        if (value == null) {
            return SchemaAndValue.NULL;
        }
        UpsertEnvelope envelope;
        try {
            envelope = wireFormat.read(topic, value, UpsertEnvelope.class);
        } catch (IOException e) {
            throw new DataException("not an UpsertEnvelope: " + e.getMessage(), e);
        }
        if (envelope == null || envelope.payload() == null || envelope.turnId() == null || envelope.eventId() == null) {
            throw new DataException("not an UpsertEnvelope: turnId, eventId and payload are required");
        }
        try {
            return new SchemaAndValue(ROW, row(envelope));
        } catch (DataException e) {
            throw new DataException("UpsertEnvelope " + envelope.eventId() + " does not fill the table's row: "
                    + e.getMessage(), e);
        }
    }

    /** The table row of one envelope; a {@link DataException} names a required column it leaves empty. */
    public static Struct row(UpsertEnvelope envelope) {
        Struct row = new Struct(ROW)
                .put("turn_id", envelope.turnId())
                .put("tenant_id", envelope.tenantId())
                .put("event_type", envelope.payload().type().wire())
                .put("seq", envelope.seq())
                .put("event_id", envelope.eventId())
                .put("updated_at", new Date(envelope.timestamp()));
        if (envelope.payload() instanceof UIUpsert item) {
            row.put("item_id", item.itemId())
                    .put("thread_id", item.threadId())
                    .put("item_type", item.itemType().wire())
                    .put("change_type", item.changeType().wire())
                    .put("version", item.version())
                    .put("content", item.content())
                    .put("origin", item.origin())
                    .put("provider_id", item.providerId())
                    .put("tool_name", item.toolName())
                    .put("tool_arguments", item.toolArguments() == null ? null : Json.toString(item.toolArguments()))
                    .put("call_id", item.callId())
                    .put("tool_output", item.toolOutput() == null ? null : Json.toString(item.toolOutput()))
                    .put("success", item.success())
                    .put("error_code", item.errorCode())
                    .put("error_message", item.errorMessage());
        } else if (envelope.payload() instanceof UITurnEvent turn) {
            row.put("item_id", TURN_ROW_ITEM_ID)
                    .put("thread_id", turn.threadId())
                    .put("model_id", turn.modelId())
                    .put("provider_id", turn.providerId())
                    .put("status", WireValue.wireOrNull(turn.status()));
            if (turn.usage() != null) {
                row.put("prompt_tokens", turn.usage().promptTokens())
                        .put("completion_tokens", turn.usage().completionTokens())
                        .put("total_tokens", turn.usage().totalTokens());
            }
            ErrorInfo error = turn.error();
            if (error != null) {
                row.put("error_code", error.code()).put("error_message", error.message());
            }
        } else if (envelope.payload() instanceof UIStatus status) {
            row.put("item_id", status.stateKey())
                    .put("thread_id", status.threadId())
                    .put("status", status.status())
                    .put("tool_name", status.toolName())
                    .put("call_id", status.callId());
            if (status.error() != null) {
                row.put("error_code", status.error().code()).put("error_message", status.error().message());
            }
        }
        row.validate();
        return row;
    }
}
