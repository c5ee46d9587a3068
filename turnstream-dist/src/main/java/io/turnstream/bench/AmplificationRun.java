package io.turnstream.bench;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.bench.BenchResults.Amplification;
import io.turnstream.bench.SimulatedTurn.Item;
import io.turnstream.model.Json;
import io.turnstream.model.PayloadType;
import io.turnstream.model.Topics;
import io.turnstream.model.UiPayloadType;
import io.turnstream.runtime.GrouplessConsumer;
import io.turnstream.runtime.StreamsService;
import io.turnstream.runtime.TopicReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * Write amplification: one turn with one long message of each length, through the topology with
 * the seed gradient and with the growth rule. Upsert bytes are the values on the upserts topic for
 * that message over its final content; changelog bytes are what the turn added to the application's
 * changelog topics, counted as record keys and values (read back) and as log bytes on disk
 * (batch headers and transaction markers included), over the turn's content.
 */
final class AmplificationRun {

    private final BenchCluster cluster;
    private final BenchConfig config;
    private final Settle settle;
    private final PrintWriter progress;

    AmplificationRun(BenchCluster cluster, BenchConfig config, Settle settle, PrintWriter progress) {
        this.cluster = cluster;
        this.config = config;
        this.settle = settle;
        this.progress = progress;
    }

    /** Every run, {@code config.amplificationRuns()} of them, each on fresh topics and fresh apps. */
    List<Amplification> run() throws Exception {
        List<Amplification> results = new ArrayList<>();
        for (int run = 1; run <= config.amplificationRuns(); run++) {
            results.addAll(gradient(run, "seed", 0));
            results.addAll(gradient(run, "growth-" + config.growthFraction(), config.growthFraction()));
        }
        return results;
    }

    private List<Amplification> gradient(int run, String name, double growthFraction) throws Exception {
        String phase = "amp-" + (growthFraction == 0 ? "seed" : "growth") + "-r" + run;
        String appId = "bench-" + phase;
        settle.before("amplification run " + run + ", " + name);
        Topics topics = cluster.createTopics(phase);
        Map<String, long[]> upsertBytes = new ConcurrentHashMap<>();
        Set<String> closedTurns = ConcurrentHashMap.newKeySet();
        List<Amplification> results = new ArrayList<>();
        try (StreamsService app = cluster.startTopology(appId, topics, growthFraction);
             Producer<String, byte[]> producer = cluster.producer();
             Admin admin = Admin.create(cluster.clientProperties());
             TopicTail tail = TopicTail.start(cluster.bootstrapServers(), topics.upserts(), (record, visible) -> {
                 JsonNode envelope = Json.MAPPER.readTree(record.value());
                 JsonNode payload = envelope.path("payload");
                 if (PayloadType.ITEM_UPSERT.wire().equals(envelope.path("payloadType").asText())) {
                     if (payload.path("itemId").asText().endsWith("-msg")) {
                         long[] sum = upsertBytes.computeIfAbsent(record.key(), k -> new long[2]);
                         sum[0] += record.value().length;
                         sum[1]++;
                     }
                 } else if (!UiPayloadType.TURN_STARTED.wire().equals(payload.path("type").asText())) {
                     closedTurns.add(record.key());
                 }
             })) {
            for (int tokens : config.itemLengths()) {
                SimulatedTurn turn = SimulatedTurn.longMessage(phase + "-" + tokens, tokens, config.tokensPerDelta());
                progress.printf("amplification run %d of %d, %-12s %,7d tokens%n", run, config.amplificationRuns(), name,
                        tokens);
                progress.flush();
                List<TopicPartition> changelogs = changelogPartitions(admin, appId);
                Map<TopicPartition, Long> offsetsBefore = endOffsets(changelogs);
                long diskBefore = diskBytes(admin, appId);
                for (int i = 0; i < turn.size(); i++) {
                    producer.send(new ProducerRecord<>(topics.rawEvents(), turn.runId, Json.toBytes(turn.event(i))));
                }
                producer.flush();
                if (!TopicTail.await(() -> closedTurns.contains(turn.turnId), Duration.ofMinutes(5))) {
                    throw new IllegalStateException("the " + tokens + "-token turn did not complete within 5 minutes");
                }
                changelogs = changelogPartitions(admin, appId);
                long changelogBytes = recordBytes(changelogs, offsetsBefore);
                long diskBytes = diskBytes(admin, appId) - diskBefore;
                long content = turn.content(Item.MESSAGE).getBytes(StandardCharsets.UTF_8).length;
                long turnContent = content + turn.content(Item.REASONING).getBytes(StandardCharsets.UTF_8).length;
                long[] upserts = upsertBytes.getOrDefault(turn.turnId, new long[2]);
                Amplification result = new Amplification(run, name, tokens, content, upserts[1], upserts[0],
                        ratio(upserts[0], content), turnContent, changelogBytes, ratio(changelogBytes, turnContent),
                        diskBytes, ratio(diskBytes, turnContent));
                progress.printf("  %d upserts, upsert bytes %.2fx content, changelog %.2fx (%.2fx on disk)%n",
                        result.upserts(), result.upsertAmplification(), result.changelogRatio(), result.changelogDiskRatio());
                progress.flush();
                results.add(result);
            }
        }
        return results;
    }

    private static double ratio(long bytes, long content) {
        return LadderRun.round((double) bytes / content);
    }

    private static List<TopicPartition> changelogPartitions(Admin admin, String appId) throws Exception {
        Set<String> names = admin.listTopics().names().get();
        List<String> changelogs = names.stream().filter(n -> n.startsWith(appId + "-") && n.endsWith("-changelog")).toList();
        List<TopicPartition> partitions = new ArrayList<>();
        admin.describeTopics(changelogs).allTopicNames().get().values().forEach(description ->
                description.partitions().forEach(p -> partitions.add(new TopicPartition(description.name(), p.partition()))));
        return partitions;
    }

    private Map<TopicPartition, Long> endOffsets(List<TopicPartition> partitions) {
        try (GrouplessConsumer changelogs = changelogReader()) {
            return changelogs.offsets(partitions, TopicReader.Start.END);
        }
    }

    /** Key and value bytes of the records appended to {@code partitions} since {@code before}. */
    private long recordBytes(List<TopicPartition> partitions, Map<TopicPartition, Long> before) {
        Map<TopicPartition, Long> from = new HashMap<>();
        partitions.forEach(partition -> from.put(partition, before.getOrDefault(partition, 0L)));
        long[] bytes = {0};
        try (GrouplessConsumer changelogs = changelogReader()) {
            // the serialized sizes: a null key or value counts -1
            changelogs.readToEnd(from, Duration.ofMinutes(2), record -> bytes[0] +=
                    Math.max(0, record.serializedKeySize()) + Math.max(0, record.serializedValueSize()));
        }
        return bytes[0];
    }

    private GrouplessConsumer changelogReader() {
        return new GrouplessConsumer("bench-changelogs", cluster.clientProperties());
    }

    /** Bytes on disk of the application's changelog topics, from the broker's log directories. */
    private static long diskBytes(Admin admin, String appId) throws Exception {
        long bytes = 0;
        Map<Integer, Map<String, LogDirDescription>> dirs = admin.describeLogDirs(List.of(1)).allDescriptions().get();
        for (Map<String, LogDirDescription> byDir : dirs.values()) {
            for (LogDirDescription dir : byDir.values()) {
                for (var replica : dir.replicaInfos().entrySet()) {
                    String topic = replica.getKey().topic();
                    if (topic.startsWith(appId + "-") && topic.endsWith("-changelog")) {
                        bytes += replica.getValue().size();
                    }
                }
            }
        }
        return bytes;
    }
}
