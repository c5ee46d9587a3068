package io.turnstream.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.testsupport.UsesBroker;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.utils.Utils;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Turns stream while a second topology instance joins and leaves: tasks move twice, upserts stay exactly once. */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
@UsesBroker
class RebalanceTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(90);
    private static final int PARTITIONS = 3;

    @TempDir
    static Path dir;

    private static TestCluster cluster;
    private static RawEventProducer gateway;
    private static UpsertLog upserts;

    @BeforeAll
    static void startBroker() throws Exception {
        cluster = TestCluster.start(dir.resolve("broker"), PARTITIONS, Map.of());
        gateway = cluster.gateway();
        upserts = cluster.upserts();
    }

    @AfterAll
    static void stopBroker() {
        cluster.close();
    }

    @Test
    void aSecondInstanceJoiningMidStreamAndLeavingAgainLosesAndDoublesNothing() {
        List<TurnScript> turns = twoTurnsPerPartition(60);
        try (StreamsService first = startInstance("first")) {
            sendPart(turns, 0);
            turns.forEach(t -> upserts.awaitItemUpserts(t.turnId(), 2, TIMEOUT));

            try (StreamsService second = startInstance("second")) {
                Awaitility.await("both instances run tasks").atMost(TIMEOUT).until(() ->
                        first.isRunning() && second.isRunning() && activeTasks(first) > 0 && activeTasks(second) > 0);
                sendPart(turns, 1);
                turns.forEach(t -> upserts.awaitItemUpserts(t.turnId(), 4, TIMEOUT));
            }

            Awaitility.await("the first instance took every task back").atMost(TIMEOUT)
                    .until(() -> first.isRunning() && activeTasks(first) == PARTITIONS);
            sendPart(turns, 2);
            for (TurnScript turn : turns) {
                UpsertLog.assertExactlyOnceAndComplete(upserts.awaitEnd(turn.turnId(), TIMEOUT), turn,
                        TurnScript.messageId(turn.turnId()));
            }
            assertThat(first.failure()).isNotDone();
        }
    }

    private static StreamsService startInstance(String name) {
        return TopologyInstance.start(TopologyInstance.settings(cluster.bootstrapServers(), "rebalance-test",
                dir.resolve(name), Map.of()));
    }

    /** Sends the {@code part}-th of three parts of every turn, interleaved across turns as concurrent turns are. */
    private static void sendPart(List<TurnScript> turns, int part) {
        for (TurnScript turn : turns) {
            int third = turn.size() / 3;
            gateway.send(turn.slice(part * third, part == 2 ? turn.size() : (part + 1) * third));
        }
    }

    private static int activeTasks(StreamsService instance) {
        return instance.streams().metadataForLocalThreads().stream().mapToInt(t -> t.activeTasks().size()).sum();
    }

    /** Turn ids whose run ids land two on each partition (default partitioner: murmur2 of the key), so every task has work. */
    private static List<TurnScript> twoTurnsPerPartition(int deltas) {
        int[] perPartition = new int[PARTITIONS];
        List<TurnScript> turns = new ArrayList<>();
        for (int i = 0; turns.size() < 2 * PARTITIONS; i++) {
            TurnScript turn = TurnScript.longMessage("turn-rebalance-" + i, deltas);
            int partition = Utils.toPositive(Utils.murmur2(turn.runId().getBytes(StandardCharsets.UTF_8))) % PARTITIONS;
            if (perPartition[partition] < 2) {
                perPartition[partition]++;
                turns.add(turn);
            }
        }
        return turns;
    }
}
