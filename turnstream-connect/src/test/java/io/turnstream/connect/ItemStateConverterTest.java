package io.turnstream.connect;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UiPayloadType;
import io.turnstream.model.UpsertEnvelope;
import org.apache.kafka.connect.data.Struct;
import org.junit.jupiter.api.Test;

/** A row carries its turn's tenant, so two tenants' threads of the same name stay apart in the table. */
class ItemStateConverterTest {

    @Test
    void theRowCarriesTheEnvelopesTenant() {
        UITurnEvent started = new UITurnEvent(UiPayloadType.TURN_STARTED, "turn-1", "chat-42", "model-x", "anthropic",
                null, null, null, "tenant-b");

        Struct row = ItemStateConverter.row(new UpsertEnvelope("event-1", 1L, "turn-1", 1, started.payloadType(),
                started, "tenant-b"));
        Struct noTenant = ItemStateConverter.row(new UpsertEnvelope("event-2", 1L, "turn-2", 1, started.payloadType(),
                started));

        assertThat(row.getString("tenant_id")).isEqualTo("tenant-b");
        assertThat(row.getString("thread_id")).isEqualTo("chat-42");
        assertThat(noTenant.getString("tenant_id")).isNull();
    }
}
