package io.turnstream.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.model.ItemAppend;
import io.turnstream.model.UpsertEnvelope;
import io.turnstream.testsupport.UsesBroker;
import io.turnstream.testsupport.UsesProcesses;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The seed's TC-12 on a real broker: the topology runs as {@code turnstream topology} in a child JVM
 * and is killed with SIGKILL mid-turn (no shutdown hook, no commit), then restarted on the same
 * state directory and, after a second kill, on an empty one. A read_committed client still sees
 * every upsert exactly once, and every append once with contiguous offsets.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
@UsesBroker
@UsesProcesses
class CrashRecoveryTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(90);

    @TempDir
    static Path dir;

    private static TestCluster cluster;
    private static RawEventProducer gateway;
    private static UpsertLog upserts;
    private static AppendLog appends;
    private static Path config;

    @BeforeAll
    static void startBroker() throws Exception {
        // Transactions of a killed instance that nobody fences are aborted soon after they time out.
        cluster = TestCluster.start(dir.resolve("broker"), 2,
                Map.of("transaction.abort.timed.out.transaction.cleanup.interval.ms", "1000"));
        gateway = cluster.gateway();
        upserts = cluster.upserts();
        appends = new AppendLog(cluster.bootstrapServers());
        config = Files.writeString(dir.resolve("topology.properties"), String.join("\n",
                "session.timeout.ms=6000",
                "heartbeat.interval.ms=1000",
                "transaction.timeout.ms=5000",
                ""));
    }

    @AfterAll
    static void stopBroker() {
        appends.close();
        cluster.close();
    }

    @Test
    void killedMidTurnAndRestartedOnTheSameThenOnAFreshStateDirSeesEveryUpsertAndAppendOnce() throws IOException {
        TurnScript script = TurnScript.longMessage("turn-crash", 150);
        String turnId = script.turnId();
        int third = script.size() / 3;
        Path stateDir = Files.createDirectories(dir.resolve("state-1"));

        TurnstreamProcess first = startTopology("crash-first", stateDir);
        gateway.send(script.slice(0, third));
        long seenBeforeFirstKill = UpsertLog.itemUpserts(upserts.awaitItemUpserts(turnId, 3, TIMEOUT));
        gateway.sendWithoutWaiting(script.slice(third, 2 * third));
        first.kill();
        gateway.flush();

        TurnstreamProcess sameStateDir = startTopology("crash-same-state", stateDir);
        upserts.awaitItemUpserts(turnId, (int) seenBeforeFirstKill + 1, TIMEOUT);
        gateway.sendWithoutWaiting(script.slice(2 * third, script.size() - 1));
        sameStateDir.kill();
        gateway.flush();

        TurnstreamProcess freshStateDir = startTopology("crash-fresh-state", Files.createDirectories(dir.resolve("state-2")));
        gateway.send(script.slice(script.size() - 1, script.size()));
        List<UpsertEnvelope> turn = upserts.awaitEnd(turnId, TIMEOUT);

        UpsertLog.assertExactlyOnceAndComplete(turn, script, TurnScript.messageId(turnId));
        String message = script.expectedContent(TurnScript.messageId(turnId));
        List<ItemAppend> turnAppends = appends.awaitText(turnId, TurnScript.messageId(turnId),
                message.codePointCount(0, message.length()), TIMEOUT);
        AppendLog.assertExactlyOnceAndContiguous(turnAppends, script, TurnScript.messageId(turnId));
        assertThat(freshStateDir.terminate()).as("exit code after SIGTERM").isEqualTo(143);
        assertThat(freshStateDir.stderr()).contains("topology stopped");
    }

    private static TurnstreamProcess startTopology(String name, Path stateDir) {
        int healthPort = FreePorts.take();
        TurnstreamProcess process = TurnstreamProcess.start(name, Map.of(), "topology",
                "--bootstrap-servers", cluster.bootstrapServers(), "--config", config.toString(),
                "--application-id", "crash-test", "--state-dir", stateDir.toString(),
                "--health-port", String.valueOf(healthPort));
        process.awaitHealthy(healthPort);
        return process;
    }
}
