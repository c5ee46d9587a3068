package io.turnstream.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.cli.ExitCodes;
import io.turnstream.model.UpsertEnvelope;
import io.turnstream.testsupport.UsesBroker;
import io.turnstream.testsupport.UsesProcesses;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The seed's TC-13/TC-14 on a real broker: when emitting fails for a while the topology resumes
 * without loss; when it can never succeed the topology stops with a clear error instead of
 * looping or dropping upserts.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
@UsesBroker
@UsesProcesses
class EmitFailureTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(90);

    @TempDir
    static Path dir;

    private static TestCluster cluster;
    private static EmbeddedKafkaBroker broker;
    private static RawEventProducer gateway;
    private static UpsertLog upserts;

    @BeforeAll
    static void startBroker() throws Exception {
        cluster = TestCluster.start(dir.resolve("broker"), 2, Map.of());
        broker = cluster.broker();
        gateway = cluster.gateway();
        upserts = cluster.upserts();
    }

    @AfterAll
    static void stopBroker() {
        cluster.close();
    }

    @Test
    void theBrokerGoingAwayMidTurnLosesNothingOnceItIsBack() throws Exception {
        TurnScript script = TurnScript.longMessage("turn-outage", 90);
        int third = script.size() / 3;
        try (StreamsService topology = TopologyInstance.start(TopologyInstance.settings(broker.bootstrapServers(),
                "outage-test", Files.createDirectories(dir.resolve("outage-state")), Map.of()))) {
            gateway.send(script.slice(0, third));
            upserts.awaitItemUpserts(script.turnId(), 3, TIMEOUT);
            gateway.send(script.slice(third, 2 * third));

            broker.stop();
            try {
                Awaitility.await("the topology has lost its broker").atMost(TIMEOUT)
                        .until(() -> producerConnections(topology) == 0);
            } finally {
                broker.start();
            }
            gateway.send(script.slice(2 * third, script.size()));

            List<UpsertEnvelope> turn = upserts.awaitEnd(script.turnId(), TIMEOUT);
            UpsertLog.assertExactlyOnceAndComplete(turn, script, TurnScript.messageId(script.turnId()));
            assertThat(topology.failure()).isNotDone();
            assertThat(topology.isRunning()).isTrue();
        }
    }

    @Test
    void aProducerThatCanNeverDeliverStopsTheTopologyWithOneClearError() throws Exception {
        // Every upsert is larger than this topic accepts: a failure no retry can fix.
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
            admin.createTopics(List.of(new NewTopic("llm.upserts.tiny", 1, (short) 1)
                    .configs(Map.of("max.message.bytes", "100")))).all().get();
        }
        Path config = Files.writeString(dir.resolve("tiny.properties"), String.join("\n",
                "turnstream.topic.upserts=llm.upserts.tiny",
                "turnstream.streams.max-thread-replacements=1",
                "commit.interval.ms=100",
                "session.timeout.ms=6000",
                ""));
        try (TurnstreamProcess topology = TurnstreamProcess.start("unwritable", Map.of(), "topology",
                "--bootstrap-servers", broker.bootstrapServers(), "--config", config.toString(),
                "--application-id", "unwritable-test", "--state-dir", dir.resolve("unwritable-state").toString(),
                "--health-port", "-1")) {
            gateway.send(TurnScript.longMessage("turn-unwritable", 3).events());

            assertThat(topology.awaitExit(TIMEOUT)).isEqualTo(ExitCodes.FAILURE);
            List<String> lines = topology.stderr().lines().toList();
            assertThat(lines.get(lines.size() - 1)).as(topology.stderr())
                    .startsWith("turnstream topology: error: topology stopped: ")
                    .contains("llm.upserts.tiny")
                    .contains("RecordTooLargeException");
        }
    }

    /** The producer's network thread notices a lost broker at once; the consumer only when polled. */
    private static double producerConnections(StreamsService topology) {
        return topology.streams().metrics().entrySet().stream()
                .filter(e -> e.getKey().group().equals("producer-metrics") && e.getKey().name().equals("connection-count"))
                .map(Map.Entry<MetricName, ? extends Metric>::getValue)
                .mapToDouble(m -> ((Number) m.metricValue()).doubleValue())
                .sum();
    }
}
