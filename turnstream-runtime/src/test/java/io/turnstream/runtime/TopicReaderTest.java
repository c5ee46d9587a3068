package io.turnstream.runtime;

import static io.turnstream.runtime.TopicsOnBroker.valueOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.turnstream.schema.SchemaRegistryException;
import io.turnstream.schema.UnreadableSchemaException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.OffsetOutOfRangeException;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The one reader without a consumer group, on a real broker: where it starts, and its failure policy. */
// turnstream-test-support's @UsesBroker, which this module cannot depend on (test-support depends on it)
@Tag("broker")
class TopicReaderTest {

    private static final Duration PATIENCE = Duration.ofSeconds(60);

    @RegisterExtension
    static final TopicsOnBroker kafka = TopicsOnBroker.start();

    @Test
    void fromTheBeginningReadsWhatIsThereAndWhatComesAfter() throws Exception {
        String topic = kafka.newTopic(2);
        kafka.write(topic, 0, "first");
        kafka.write(topic, 1, "second");
        List<String> read = new CopyOnWriteArrayList<>();

        try (TopicReader reader = read(topic, TopicReader.Start.BEGINNING, read)) {
            reader.caughtUp().get();
            assertThat(read).containsExactlyInAnyOrder("first", "second");

            kafka.write(topic, 0, "third");
            await().atMost(PATIENCE).untilAsserted(() -> assertThat(read).containsExactlyInAnyOrder("first", "second", "third"));
        }
    }

    @Test
    void fromTheEndReadsOnlyWhatIsWrittenAfterwards() throws Exception {
        String topic = kafka.newTopic(1);
        kafka.write(topic, 0, "before");
        List<String> read = new CopyOnWriteArrayList<>();

        try (TopicReader reader = read(topic, TopicReader.Start.END, read)) {
            reader.caughtUp().get();
            kafka.write(topic, 0, "after");

            await().atMost(PATIENCE).untilAsserted(() -> assertThat(read).containsExactly("after"));
        }
    }

    @Test
    void sinceAMomentSkipsWhatWasWrittenBeforeIt() throws Exception {
        String topic = kafka.newTopic(1);
        kafka.write(topic, 0, Instant.ofEpochMilli(1_000), "too old");
        kafka.write(topic, 0, Instant.ofEpochMilli(2_000), "at the moment");
        kafka.write(topic, 0, Instant.ofEpochMilli(3_000), "later");
        List<String> read = new CopyOnWriteArrayList<>();

        try (TopicReader reader = read(topic, TopicReader.Start.since(Instant.ofEpochMilli(2_000)), read)) {
            reader.caughtUp().get();

            assertThat(read).containsExactly("at the moment", "later");
        }
    }

    @Test
    void aRecordTheHandlerCannotTakeIsSkippedAndReadingGoesOn() throws Exception {
        String topic = kafka.newTopic(1);
        kafka.write(topic, 0, "unreadable");
        kafka.write(topic, 0, "unknown schema id");
        kafka.write(topic, 0, "fine");
        List<String> read = new CopyOnWriteArrayList<>();

        try (TopicReader reader = TopicReader.reading("test-reader", kafka.clientProperties(), List.of(topic))
                .from(TopicReader.Start.BEGINNING)
                .start((record, polledAt) -> {
                    String value = valueOf(record);
                    if (value.equals("unreadable")) {
                        throw new IllegalArgumentException("not a record this handler reads");
                    }
                    if (value.equals("unknown schema id")) {
                        // the registry answered 40403: the record's fault, though the registry's answer is its cause
                        throw new UncheckedIOException(new UnreadableSchemaException("schema id 42 is unknown to "
                                + "the schema registry", new SchemaRegistryException("Schema not found", 40403, null)));
                    }
                    read.add(value);
                })) {
            reader.caughtUp().get();

            assertThat(read).containsExactly("fine");
            assertThat(reader.healthy()).isTrue();
        }
    }

    /**
     * A handler that cannot take a record for what it depends on (a schema registry that cannot be reached), not for
     * the record, skips nothing: the record, and those after it, are read again after a backoff until it takes them,
     * in their order; meanwhile the reader says why and is not healthy.
     */
    @Test
    void aRecordTheHandlerCannotTakeForNowIsReadAgainUntilItIsTaken() throws Exception {
        String topic = kafka.newTopic(2);
        kafka.write(topic, 0, "a");
        kafka.write(topic, 0, "b needs the registry");
        kafka.write(topic, 0, "c");
        kafka.write(topic, 1, "x");
        List<String> read = new CopyOnWriteArrayList<>();
        AtomicBoolean registryDown = new AtomicBoolean(true);

        try (TopicReader reader = TopicReader.reading("test-reader", kafka.clientProperties(), List.of(topic))
                .from(TopicReader.Start.BEGINNING)
                .start((record, polledAt) -> {
                    String value = valueOf(record);
                    if (value.startsWith("b") && registryDown.get()) {
                        // as a reader that wraps what it cannot decode does
                        throw new IllegalStateException("cannot decode", new SchemaRegistryException(
                                "schema registry [http://127.0.0.1:8081/] cannot be reached", -1, null));
                    }
                    read.add(value);
                })) {
            await().atMost(PATIENCE).until(() -> reader.waitingFor().isPresent());

            assertThat(read).doesNotContain("b needs the registry", "c").contains("a");
            assertThat(reader.waitingFor().get()).hasMessageContaining("cannot be reached");
            assertThat(reader.healthy()).isFalse();
            assertThat(reader.caughtUp()).isNotDone();

            registryDown.set(false);
            reader.caughtUp().get();

            assertThat(read).containsExactlyInAnyOrder("a", "b needs the registry", "c", "x");
            assertThat(read.stream().filter(value -> !value.equals("x")))
                    .containsExactly("a", "b needs the registry", "c");
            await().atMost(PATIENCE).until(reader::healthy);
            assertThat(reader.waitingFor()).isEmpty();
        }
    }

    @Test
    void aMissingTopicFailsTheStartWithItsName() {
        String missing = "never-created-" + UUID.randomUUID();

        assertThatThrownBy(() -> TopicReader.reading("test-reader", kafka.clientProperties(), List.of(missing))
                .topicWait(Duration.ofMillis(500)).start((record, polledAt) -> { }))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("topic " + missing + " does not exist");
    }

    @Test
    void aFatalClientErrorStopsTheReaderAndTellsItsOwner() throws Exception {
        String topic = kafka.newTopic(1);
        for (int i = 0; i < 5; i++) {
            kafka.write(topic, 0, "early " + i);
        }
        Properties props = kafka.clientProperties();
        // no silent jump when the position is gone: the reader sees the client's error
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "1");
        CountDownLatch firstRecordHeld = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicReference<Throwable> toldOwner = new AtomicReference<>();

        try (TopicReader reader = TopicReader.reading("test-reader", props, List.of(topic))
                .from(TopicReader.Start.BEGINNING)
                .onFailure(toldOwner::set)
                .start((record, polledAt) -> {
                    if (record.offset() == 0) {
                        firstRecordHeld.countDown();
                        release.await();
                    }
                })) {
            firstRecordHeld.await();
            // while the reader holds its first batch, what it would fetch next is deleted
            for (int i = 0; i < 5; i++) {
                kafka.write(topic, 0, "late " + i);
            }
            kafka.admin().deleteRecords(Map.of(new TopicPartition(topic, 0), RecordsToDelete.beforeOffset(10))).all().get();
            release.countDown();

            await().atMost(PATIENCE).untilAsserted(() -> assertThat(toldOwner.get()).isInstanceOf(OffsetOutOfRangeException.class));
            assertThat(reader.healthy()).isFalse();
            assertThat(reader.failure()).isSameAs(toldOwner.get());
        }
    }

    @Test
    void aBrokerOutageIsWaitedOutAndReadingResumes() throws Exception {
        String topic = kafka.newTopic(1);
        List<String> read = new CopyOnWriteArrayList<>();

        try (TopicReader reader = read(topic, TopicReader.Start.END, read)) {
            reader.caughtUp().get();
            kafka.broker().stop();
            await().atMost(PATIENCE).until(() -> !reader.healthy());

            kafka.broker().start();
            kafka.write(topic, 0, "after the outage");

            await().atMost(PATIENCE).untilAsserted(() -> assertThat(read).containsExactly("after the outage"));
            await().atMost(PATIENCE).until(reader::healthy);
            assertThat(reader.failure()).isNull();
        }
    }

    private static TopicReader read(String topic, TopicReader.Start start, List<String> into) {
        return new TopicReader("test-reader", kafka.clientProperties(), List.of(topic), start, record -> into.add(valueOf(record)));
    }
}
