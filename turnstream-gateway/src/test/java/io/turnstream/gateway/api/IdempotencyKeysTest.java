package io.turnstream.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.turnstream.gateway.http.ApiError;
import io.turnstream.gateway.turn.TurnPhase;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.model.Json;
import io.turnstream.model.Topics;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.model.WireFormat;
import io.turnstream.schema.RegistryOutage;
import io.turnstream.schema.SchemaRegistryException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

/**
 * A key starts one turn per request for 24 h, on whichever gateway it arrives; another request under the key is
 * refused. Two gateways here are two {@link IdempotencyKeys} with their own {@link IdempotencyIndex}, fed with the
 * request records the other wrote as the index's reader would be.
 */
class IdempotencyKeysTest {

    private final MutableClock clock = new MutableClock();
    private final IdempotencyIndex index = new IdempotencyIndex(clock, 2, WireFormat.JSON);
    /** Turns Kafka still holds, by turn id, to their thread. */
    private final Map<String, String> kept = new ConcurrentHashMap<>();
    private final IdempotencyKeys keys = new IdempotencyKeys(index, turnId -> Optional.ofNullable(kept.get(turnId)),
            clock, Duration.ZERO);
    private final AtomicInteger started = new AtomicInteger();
    private final Function<IdempotentStart, TurnStatus> start = keyed -> {
        int n = started.incrementAndGet();
        return keyed == null ? new TurnStatus("turn-" + n, "thread-" + n, "run-" + n, TurnPhase.RUNNING)
                : new TurnStatus(keyed.turnId(), keyed.threadId(), keyed.runId(), TurnPhase.RUNNING);
    };

    @Test
    void theSameRequestUnderTheSameKeyGetsTheFirstTurnForADay() {
        IdempotencyKeys.Started first = keys.start("acme", "k1", "POST /v1/turns\n{}", start);
        IdempotencyKeys.Started again = keys.start("acme", "k1", "POST /v1/turns\n{}", start);

        assertThat(first.replayed()).isFalse();
        assertThat(again.replayed()).isTrue();
        assertThat(again.turn()).isEqualTo(first.turn());
        assertThat(started).hasValue(1);

        clock.advance(IdempotencyKeys.RETENTION);
        assertThat(keys.start("acme", "k1", "POST /v1/turns\n{}", start).replayed()).as("after 24 h").isFalse();
        assertThat(started).hasValue(2);
    }

    @Test
    void anotherRequestUnderAUsedKeyIs422AndKeysArePerTenant() {
        keys.start("acme", "k1", "POST /v1/turns\n{\"prompt\": \"a\"}", start);

        assertThatThrownBy(() -> keys.start("acme", "k1", "POST /v1/turns\n{\"prompt\": \"b\"}", start))
                .isInstanceOf(ApiError.class).hasMessageContaining("was used for a different request")
                .extracting(e -> ((ApiError) e).status()).isEqualTo(422);
        assertThat(keys.start("globex", "k1", "POST /v1/turns\n{\"prompt\": \"b\"}", start).replayed()).isFalse();
        assertThat(keys.start(null, "k2", "x", start).replayed()).isFalse();
        assertThat(started).hasValue(3);
    }

    @Test
    void aRefusedStartLeavesTheKeyFreeAndBadKeysAre400() {
        assertThatThrownBy(() -> keys.start("acme", "k1", "x", keyed -> {
            throw new ApiError(429, "busy");
        })).hasMessage("busy");
        assertThat(keys.start("acme", "k1", "x", start).replayed()).isFalse();
        assertThatThrownBy(() -> keys.start("acme", "has space", "x", start)).isInstanceOf(ApiError.class)
                .hasMessageContaining("Idempotency-Key must be");
    }

    /** The other gateway learns the key from the request record (its headers), as its index reads it. */
    @Test
    void aRetryAtAnotherGatewayGetsTheSameTurnAndAnotherBodyIs422() throws Exception {
        TurnStatus first = keys.start("acme", "k1", "POST /v1/turns\n{\"prompt\": \"a\"}", start).turn();
        String fingerprint = index.find("acme", "k1").orElseThrow().fingerprint();
        IdempotencyIndex otherIndex = new IdempotencyIndex(clock, 10, WireFormat.JSON);
        otherIndex.record(requestRecord("acme", "k1", fingerprint, first));
        IdempotencyKeys other = new IdempotencyKeys(otherIndex, turnId -> Optional.empty(), clock, Duration.ZERO);

        IdempotencyKeys.Started retried = other.start("acme", "k1", "POST /v1/turns\n{\"prompt\": \"a\"}", start);

        assertThat(retried.replayed()).isTrue();
        assertThat(retried.turn()).isEqualTo(first);
        assertThatThrownBy(() -> other.start("acme", "k1", "POST /v1/turns\n{\"prompt\": \"b\"}", start))
                .isInstanceOf(ApiError.class).extracting(e -> ((ApiError) e).status()).isEqualTo(422);
        assertThat(started).as("one turn in all").hasValue(1);
    }

    /**
     * A request record the index cannot read for now (the schema registry cannot be reached) is thrown to its reader,
     * which reads it again (what the index answers meanwhile: {@link IdempotencyIndexOutageTest}); nothing of it is
     * kept until then, and once read the key is known as before.
     */
    @Test
    void aRequestRecordReadWhileTheSchemaRegistryIsDownIsThrownToItsReaderAndKnownOnceReadAgain() {
        TurnStatus first = keys.start("acme", "k1", "POST /v1/turns\n{\"prompt\": \"a\"}", start).turn();
        ConsumerRecord<String, byte[]> record = requestRecord("acme", "k1",
                index.find("acme", "k1").orElseThrow().fingerprint(), first);
        RegistryOutage registry = new RegistryOutage();
        IdempotencyIndex otherIndex = new IdempotencyIndex(clock, 10, registry);
        IdempotencyKeys other = new IdempotencyKeys(otherIndex, turnId -> Optional.empty(), clock, Duration.ZERO);

        registry.down = true;
        assertThatThrownBy(() -> otherIndex.record(record)).isInstanceOf(SchemaRegistryException.class);
        assertThat(otherIndex.find("acme", "k1")).isEmpty();
        assertThat(otherIndex.requested(first.turnId())).isEmpty();

        registry.down = false;
        otherIndex.record(record);

        assertThatThrownBy(() -> other.start("acme", "k1", "POST /v1/turns\n{\"prompt\": \"b\"}", start))
                .isInstanceOf(ApiError.class).extracting(e -> ((ApiError) e).status()).isEqualTo(422);
        assertThat(other.start("acme", "k1", "POST /v1/turns\n{\"prompt\": \"a\"}", start).turn()).isEqualTo(first);
        assertThat(started).as("one turn in all").hasValue(1);
    }

    /** Two gateways that take the same key at the same moment (neither knows the other's yet) name the same turn. */
    @Test
    void theKeyNamesTheTurnSoSimultaneousAcceptsAgree() {
        IdempotencyKeys other = new IdempotencyKeys(new IdempotencyIndex(clock, 10, WireFormat.JSON),
                turnId -> Optional.empty(), clock, Duration.ZERO);

        TurnStatus here = keys.start("acme", "k1", "x", start).turn();
        TurnStatus there = other.start("acme", "k1", "x", start).turn();

        assertThat(there).isEqualTo(here);
        assertThat(new IdempotentStart("globex", "k1", "x").turnId()).as("per tenant").isNotEqualTo(here.turnId());
    }

    /**
     * Two different requests under one key at the same moment: neither gateway knew of the other's when it put its
     * own on Kafka. Reading its request back, each learns which came first in their partition; the first took the
     * key, the other is a 422 (and its turn, ended unrun by the gateway running the thread, never runs).
     */
    @Test
    void ofTwoRequestsUnderOneKeyAtOnceTheFirstInTheirPartitionTakesIt() {
        TurnStatus theirs = new TurnStatus("turn-theirs", new IdempotentStart("acme", "k1", "f").threadId(), "run-x",
                TurnPhase.RUNNING);
        Function<IdempotentStart, TurnStatus> afterTheirs = keyed -> {
            TurnStatus mine = start.apply(keyed);
            assertThat(mine.threadId()).as("the key's thread: one partition").isEqualTo(theirs.threadId());
            index.record(requestRecord("acme", "k1", "f", theirs, 4));
            index.record(requestRecord("acme", "k1", keyed.fingerprint(), mine, 5));
            return mine;
        };

        assertThatThrownBy(() -> keys.start("acme", "k1", "y", afterTheirs)).isInstanceOf(ApiError.class)
                .extracting(e -> ((ApiError) e).status()).isEqualTo(422);
        assertThat(index.keyTakenBy("turn-theirs", Duration.ZERO)).contains(theirs);

        Function<IdempotentStart, TurnStatus> beforeTheirs = keyed -> {
            TurnStatus mine = start.apply(keyed);
            index.record(requestRecord("acme", "k2", keyed.fingerprint(), mine, 6));
            index.record(requestRecord("acme", "k2", "f", theirs, 7));
            return mine;
        };
        IdempotencyKeys.Started won = keys.start("acme", "k2", "y", beforeTheirs);
        assertThat(won.replayed()).isFalse();
        assertThat(index.keyTakenBy(won.turn().turnId(), Duration.ZERO)).contains(won.turn());
    }

    /** Every turn requested is known from its record, with its tenant, whether or not it has started. */
    @Test
    void everyRequestedTurnIsKnownWithItsTenant() {
        TurnStatus queued = new TurnStatus("turn-q", "thread-q", "run-q", TurnPhase.RUNNING);
        TurnRequestRecord request = TurnRequestRecord.request(queued.turnId(), queued.threadId(), queued.runId(),
                "acme", clock.millis(), Json.MAPPER.createObjectNode().put("prompt", "a"));

        index.record(new ConsumerRecord<>(Topics.DEFAULTS.turnRequests(), 1, 3L, queued.threadId(),
                WireFormat.JSON.write(Topics.DEFAULTS.turnRequests(), request)));

        assertThat(index.requested("turn-q")).contains(new IdempotencyIndex.Requested("acme", queued));
        assertThat(index.requested("turn-unknown")).isEmpty();
    }

    /** Past the index's 24 h, a key whose turn Kafka still holds gets that turn, not a second one under its id. */
    @Test
    void aKeyWhoseTurnIsStillKeptGetsItBack() {
        TurnStatus first = keys.start("acme", "k1", "x", start).turn();
        kept.put(first.turnId(), first.threadId());
        clock.advance(IdempotencyKeys.RETENTION.plus(Duration.ofMinutes(1)));

        IdempotencyKeys.Started later = keys.start("acme", "k1", "x", start);

        assertThat(later.replayed()).isTrue();
        assertThat(later.turn().turnId()).isEqualTo(first.turnId());
        assertThat(started).hasValue(1);
    }

    @Test
    void pastItsBoundTheIndexForgetsTheOldestKey() {
        keys.start("acme", "k1", "x", start);
        keys.start("acme", "k2", "x", start);
        keys.start("acme", "k3", "x", start);

        assertThat(index.find("acme", "k3")).isPresent();
        assertThat(index.find("acme", "k1")).isEmpty();
    }

    /** The request record the first gateway wrote, as the other gateway's index reads it. */
    private ConsumerRecord<String, byte[]> requestRecord(String tenant, String key, String fingerprint,
                                                         TurnStatus turn) {
        return requestRecord(tenant, key, fingerprint, turn, 0);
    }

    /** As the index's reader reads it at {@code offset} of partition 0. */
    private ConsumerRecord<String, byte[]> requestRecord(String tenant, String key, String fingerprint,
                                                         TurnStatus turn, long offset) {
        TurnRequestRecord request = TurnRequestRecord.request(turn.turnId(), turn.threadId(), turn.runId(), tenant,
                clock.millis(), Json.MAPPER.createObjectNode().put("prompt", "a"));
        ConsumerRecord<String, byte[]> record = new ConsumerRecord<>(Topics.DEFAULTS.turnRequests(), 0, offset,
                turn.threadId(), WireFormat.JSON.write(Topics.DEFAULTS.turnRequests(), request));
        record.headers().add(IdempotentStart.KEY_HEADER, key.getBytes(StandardCharsets.UTF_8));
        record.headers().add(IdempotentStart.FINGERPRINT_HEADER, fingerprint.getBytes(StandardCharsets.UTF_8));
        return record;
    }

    private static final class MutableClock extends Clock {
        private Instant now = Instant.parse("2026-11-25T12:00:00Z");

        void advance(Duration by) {
            now = now.plus(by);
        }

        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }
}
