package io.turnstream.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.turnstream.runtime.Settings;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TopologyDescription;
import org.junit.jupiter.api.Test;

/** The Streams properties the topology runs with: its producer and consumer defaults, and the user's keys winning over them. */
class TopologyConfigTest {

    @Test
    void theProducerCompressesAndGivesUpOnASendInsteadOfRetryingItForever() {
        StreamsConfig config = new StreamsConfig(streamsProperties(Map.of()));
        Map<String, Object> producer = config.getProducerConfigs("client");

        assertThat(producer).containsEntry("compression.type", "lz4")
                .containsEntry("delivery.timeout.ms", "30000")
                .containsEntry("request.timeout.ms", "15000")
                .containsEntry("transaction.timeout.ms", "5000");
    }

    @Test
    void theUsersKeysWinPlainOrWithTheProducerPrefix() {
        StreamsConfig config = new StreamsConfig(streamsProperties(Map.of(
                "compression.type", "zstd",
                "producer.delivery.timeout.ms", "120000")));
        Map<String, Object> producer = config.getProducerConfigs("client");

        assertThat(producer).containsEntry("compression.type", "zstd")
                .containsEntry("delivery.timeout.ms", "120000");
    }

    @Test
    void theProducerOpensBatchesOf64KbUnlessTheUserSetsTheSize() {
        StreamsConfig byDefault = new StreamsConfig(streamsProperties(Map.of()));
        StreamsConfig plain = new StreamsConfig(streamsProperties(Map.of("batch.size", "16384")));
        StreamsConfig prefixed = new StreamsConfig(streamsProperties(Map.of("producer.batch.size", "32768")));

        assertThat(byDefault.getProducerConfigs("client")).containsEntry("batch.size", "65536");
        assertThat(plain.getProducerConfigs("client")).containsEntry("batch.size", "16384");
        assertThat(prefixed.getProducerConfigs("client")).containsEntry("batch.size", "32768");
    }

    @Test
    void theChangelogsGetSegmentsOf64MbWithIndexesOf256KbUnlessTheUserSetsThem() {
        StreamsConfig byDefault = new StreamsConfig(streamsProperties(Map.of()));
        StreamsConfig users = new StreamsConfig(streamsProperties(Map.of("topic.segment.index.bytes", "10485760")));

        assertThat(byDefault.originalsWithPrefix(StreamsConfig.TOPIC_PREFIX))
                .containsEntry("segment.bytes", "67108864")
                .containsEntry("segment.index.bytes", "262144");
        assertThat(users.originalsWithPrefix(StreamsConfig.TOPIC_PREFIX))
                .containsEntry("segment.bytes", "67108864")
                .containsEntry("segment.index.bytes", "10485760");
        // a full segment's entries, one per 4 KB of log, fit its time index (12 bytes each)
        assertThat(Long.parseLong(TopologyConfig.DEFAULT_CHANGELOG_SEGMENT_BYTES) / 4096 * 12)
                .isLessThanOrEqualTo(Long.parseLong(TopologyConfig.DEFAULT_CHANGELOG_SEGMENT_INDEX_BYTES));
    }

    @Test
    void aTaskOfTheOneInputTopicNeverIdlesUnlessTheUserSetsTheIdleTime() {
        StreamsConfig byDefault = new StreamsConfig(streamsProperties(Map.of()));
        StreamsConfig users = new StreamsConfig(streamsProperties(Map.of("max.task.idle.ms", "0")));

        assertThat(byDefault.getLong(StreamsConfig.MAX_TASK_IDLE_MS_CONFIG)).isEqualTo(StreamsConfig.MAX_TASK_IDLE_MS_DISABLED);
        assertThat(users.getLong(StreamsConfig.MAX_TASK_IDLE_MS_CONFIG)).isEqualTo(0L);
        // the premise: one source topic, so each task reads one partition and has nothing to wait for
        TopologyConfig config = TopologyConfig.defaults();
        assertThat(UpsertTopology.build(config).describe().subtopologies()).singleElement()
                .satisfies(subtopology -> assertThat(subtopology.nodes().stream()
                        .filter(TopologyDescription.Source.class::isInstance)
                        .map(node -> ((TopologyDescription.Source) node).topicSet())
                        .toList()).containsExactly(Set.of(config.topics().rawEvents())));
    }

    @Test
    void theStreamThreadPollsAHundredRecordsAtATimeSoThatItRejoinsARebalanceSoon() {
        StreamsConfig config = new StreamsConfig(streamsProperties(Map.of()));

        assertThat(config.getMainConsumerConfigs("group", "client", 0)).containsEntry("max.poll.records", "100");
        // the restore consumer keeps Kafka Streams' own (restoring wants big polls)
        assertThat(config.getRestoreConsumerConfigs("client")).containsEntry("max.poll.records", "1000");
    }

    @Test
    void theUsersMaxPollRecordsWinsPlainOrWithTheConsumerPrefix() {
        StreamsConfig plain = new StreamsConfig(streamsProperties(Map.of("max.poll.records", "500")));
        StreamsConfig prefixed = new StreamsConfig(streamsProperties(Map.of("consumer.max.poll.records", "20")));

        assertThat(plain.getMainConsumerConfigs("group", "client", 0)).containsEntry("max.poll.records", "500");
        assertThat(prefixed.getMainConsumerConfigs("group", "client", 0)).containsEntry("max.poll.records", "20");
    }

    @Test
    void byDefaultTheProcessorAsksForACommitEvery75MsWhileFreshAndKafkaStreamsCommitsEvery500MsOnItsOwn() {
        TopologyConfig topology = config(Map.of());
        StreamsConfig streams = new StreamsConfig(topology.streamsProperties());

        assertThat(topology.commitPacing()).isEqualTo(new TopologyConfig.CommitPacing(75, 500, 1_000, true));
        assertThat(streams.getLong(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG)).isEqualTo(500L);
    }

    @Test
    void theCommitPacingIsConfigurable() {
        TopologyConfig topology = config(Map.of(TopologyConfig.COMMIT_INTERVAL_MS, "50",
                TopologyConfig.COMMIT_BEHIND_INTERVAL_MS, "2000", TopologyConfig.COMMIT_BEHIND_AFTER_MS, "3000"));

        assertThat(topology.commitPacing()).isEqualTo(new TopologyConfig.CommitPacing(50, 2_000, 3_000, true));
        assertThat(new StreamsConfig(topology.streamsProperties()).getLong(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG))
                .isEqualTo(2_000L);
    }

    @Test
    void theUsersCommitIntervalIsOneFixedIntervalAsBefore() {
        TopologyConfig topology = config(Map.of("commit.interval.ms", "200"));

        assertThat(topology.commitPacing().adaptive()).isFalse();
        assertThat(new StreamsConfig(topology.streamsProperties()).getLong(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG))
                .isEqualTo(200L);
    }

    @Test
    void equalIntervalsAreOneFixedInterval() {
        TopologyConfig topology = config(Map.of(TopologyConfig.COMMIT_BEHIND_INTERVAL_MS, "75"));

        assertThat(topology.commitPacing().adaptive()).isFalse();
        assertThat(new StreamsConfig(topology.streamsProperties()).getLong(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG))
                .isEqualTo(75L);
    }

    @Test
    void aBehindIntervalShorterThanTheFreshOneIsAClearError() {
        assertThatThrownBy(() -> config(Map.of(TopologyConfig.COMMIT_INTERVAL_MS, "100",
                TopologyConfig.COMMIT_BEHIND_INTERVAL_MS, "50")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(TopologyConfig.COMMIT_BEHIND_INTERVAL_MS);
    }

    @Test
    void atLeastOnceKeepsKafkaStreamsOwnCommitInterval() {
        TopologyConfig topology = config(Map.of("processing.guarantee", "at_least_once"));
        StreamsConfig config = new StreamsConfig(topology.streamsProperties());

        assertThat(config.getLong(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG)).isEqualTo(30_000L);
        assertThat(topology.commitPacing().adaptive()).isFalse();
    }

    private static Properties streamsProperties(Map<String, String> user) {
        return config(user).streamsProperties();
    }

    private static TopologyConfig config(Map<String, String> user) {
        Properties props = new Properties();
        props.put("bootstrap.servers", "127.0.0.1:9092");
        props.putAll(user);
        return TopologyConfig.from(Settings.of(props));
    }
}
