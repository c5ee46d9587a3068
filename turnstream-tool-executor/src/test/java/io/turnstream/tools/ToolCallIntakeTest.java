package io.turnstream.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.turnstream.model.Json;
import io.turnstream.model.ToolCall;
import io.turnstream.model.Topics;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.Settings;
import io.turnstream.runtime.TenantClaims;
import io.turnstream.schema.AvroWireFormat;
import io.turnstream.schema.FakeSchemaRegistry;
import io.turnstream.schema.RegistryOutage;
import io.turnstream.schema.SchemaRegistryException;
import io.turnstream.schema.SchemaRegistryClient;
import io.turnstream.schema.WireFormats;
import java.nio.ByteBuffer;
import java.time.Clock;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The intake on Avro ({@code turnstream.serde.format=avro}, against {@link FakeSchemaRegistry} on loopback), without
 * Kafka: a record naming a schema id the registry answers for but that is not Avro is the record's fault, dead-lettered
 * with its reason as any record that is not a call, and the calls after it are handed to the scheduler.
 */
class ToolCallIntakeTest {

    private static final String TOPIC = Topics.DEFAULTS.toolCalls();

    private final SchedulerHarness harness = new SchedulerHarness(ToolRegistry.of(List.of()));
    private FakeSchemaRegistry registry;
    private WireFormat avro;
    private ResultOutbox outbox;
    private ToolCallIntake intake;

    @BeforeEach
    void start() throws Exception {
        registry = FakeSchemaRegistry.start();
        avro = WireFormats.from(Settings.of(new Properties()).with(WireFormats.FORMAT_CONFIG, "avro")
                .with(SchemaRegistryClient.URL_CONFIG, registry.url()));
        CallLedger ledger = new CallLedger("turnstream-tool-ledger", Clock.systemUTC());
        outbox = new ResultOutbox(Topics.DEFAULTS, "llm.tool-calls.dlq", avro, ledger);
        intake = new ToolCallIntake(avro, TenantClaims.UNSIGNED, ledger, new OffsetTracker(), outbox, harness.scheduler,
                Clock.systemUTC());
    }

    @AfterEach
    void close() {
        harness.close();
        registry.close();
    }

    @Test
    void aRecordNamingASchemaIdThatIsNotAvroIsDeadLetteredWithItsReasonAndTheNextCallIsTaken() {
        int protobuf = registry.storeAsIs("PROTOBUF", "syntax = \"proto3\"; message Call { string id = 1; }");
        ToolCall call = new ToolCall("call-1", "turn-1", "thread-1", "run-1", "item-1", "no_such_tool",
                Json.MAPPER.createObjectNode(), 1_000, null);

        intake.accept(record(0, ByteBuffer.allocate(6).put(AvroWireFormat.MAGIC_BYTE).putInt(protobuf).put((byte) 2)
                .array()), ControlFence.NONE);
        intake.accept(record(1, avro.write(TOPIC, call)), ControlFence.NONE);

        assertThat(outbox.takeAll()).singleElement().isInstanceOfSatisfying(ResultOutbox.DeadLetter.class, dead -> {
            assertThat(dead.record().offset()).isZero();
            assertThat(dead.reason()).isEqualTo("not a ToolCall: schema id " + protobuf
                    + " is a PROTOBUF schema, not Avro");
        });
        assertThat(harness.awaitResult("turn-1", "call-1")).as("the call after it, handed to the scheduler").isNotNull();
    }

    /** A record read while the registry cannot be reached is not the record's fault: not dead-lettered, not counted as read. */
    @Test
    void aRecordReadWhileTheRegistryCannotBeReachedThrowsAndIsNeitherDeadLetteredNorCountedAsRead() {
        RegistryOutage outage = new RegistryOutage();
        OffsetTracker offsets = new OffsetTracker();
        CallLedger ledger = new CallLedger("turnstream-tool-ledger", Clock.systemUTC());
        ResultOutbox letters = new ResultOutbox(Topics.DEFAULTS, "llm.tool-calls.dlq", outage, ledger);
        ToolCallIntake intakeOnOutage = new ToolCallIntake(outage, TenantClaims.UNSIGNED, ledger, offsets, letters,
                harness.scheduler, Clock.systemUTC());
        ToolCall call = new ToolCall("call-1", "turn-1", "thread-1", "run-1", "item-1", "no_such_tool",
                Json.MAPPER.createObjectNode(), 1_000, null);
        outage.down = true;

        assertThatThrownBy(() -> intakeOnOutage.accept(record(0, outage.write(TOPIC, call)), ControlFence.NONE))
                .isInstanceOf(SchemaRegistryException.class);

        assertThat(letters.takeAll()).as("nothing dead-lettered").isEmpty();
        assertThat(offsets.committable()).as("nothing counted as read").isEmpty();
        outage.down = false;
        intakeOnOutage.accept(record(0, outage.write(TOPIC, call)), ControlFence.NONE);
        assertThat(harness.awaitResult("turn-1", "call-1")).as("read again, handed to the scheduler").isNotNull();
    }

    private static ConsumerRecord<String, byte[]> record(long offset, byte[] value) {
        return new ConsumerRecord<>(TOPIC, 0, offset, "turn-1", value);
    }
}
