package io.turnstream.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.cli.ExitCodes;
import io.turnstream.cli.Main;
import io.turnstream.model.Topics;
import io.turnstream.runtime.CommittedReader;
import io.turnstream.runtime.TurnstreamProcess;
import io.turnstream.testsupport.UsesBroker;
import io.turnstream.testsupport.UsesProcesses;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code turnstream cluster --nodes 3} as a user runs it: three broker processes, topics with three
 * replicas and {@code min.insync.replicas} 2, a node SIGKILLed while transactions go on, and every
 * node gone after the cluster is stopped.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
@UsesBroker
@UsesProcesses
class ClusterCommandTest {

    private static final Pattern NODE_LINE = Pattern.compile("node (\\d) pid (\\d+)");

    @Test
    void threeNodesKeepCommittingWhenOneIsKilledAndAllStopWithTheCluster(@TempDir Path dir) {
        try (TurnstreamProcess cluster = TurnstreamProcess.start("cluster", Map.of(),
                "cluster", "--nodes", "3", "--data-dir", dir.toString(), "--node-heap", "384m")) {
            String stdout = Awaitility.await("the cluster's ready lines").atMost(Duration.ofSeconds(150))
                    .until(cluster::stdout, out -> out.contains("node 3 pid") || !cluster.isAlive());
            assertThat(stdout).as(cluster.stderr()).startsWith("bootstrap.servers=");
            String servers = stdout.lines().findFirst().orElseThrow().substring("bootstrap.servers=".length());
            assertThat(servers.split(",")).hasSize(3);
            List<ProcessHandle> nodes = new ArrayList<>();
            Matcher node = NODE_LINE.matcher(stdout);
            while (node.find()) {
                nodes.add(ProcessHandle.of(Long.parseLong(node.group(2))).orElseThrow());
            }
            assertThat(nodes).hasSize(3).allMatch(ProcessHandle::isAlive);

            StringWriter out = new StringWriter();
            int code = Main.commandLine().setOut(new PrintWriter(out, true)).execute("topics",
                    "--bootstrap-servers", servers, "--replication-factor", "3", "--min-insync-replicas", "2");
            assertThat(code).isEqualTo(ExitCodes.OK);
            assertThat(out.toString().lines()).hasSize(Topics.DEFAULTS.byRole().size())
                    .allMatch(line -> line.contains("replicas=3 min.insync.replicas=2"));

            commit(servers, "before-kill");
            nodes.get(1).destroyForcibly();
            Awaitility.await("node 2 gone").atMost(Duration.ofSeconds(30)).until(() -> !nodes.get(1).isAlive());
            // two of three replicas remain: min.insync.replicas 2 still takes acks=all writes
            commit(servers, "after-kill");
            try (CommittedReader reader = new CommittedReader(servers, Topics.DEFAULTS.upserts())) {
                assertThat(reader.awaitUntil(Duration.ofSeconds(60), records -> records.size() >= 2))
                        .extracting(ConsumerRecord::value).containsExactly("before-kill", "after-kill");
            }

            cluster.terminate();
            Awaitility.await("every node stopped").atMost(Duration.ofSeconds(90))
                    .until(() -> nodes.stream().noneMatch(ProcessHandle::isAlive));
        }
    }

    private static void commit(String servers, String value) {
        Map<String, Object> config = Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, servers,
                ProducerConfig.TRANSACTIONAL_ID_CONFIG, "cluster-command-test",
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(config)) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(Topics.DEFAULTS.upserts(), 0, "turn-1", value));
            producer.commitTransaction();
        }
    }
}
