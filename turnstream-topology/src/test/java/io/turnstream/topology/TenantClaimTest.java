package io.turnstream.topology;

import static io.turnstream.topology.Events.functionCallDone;
import static io.turnstream.topology.Events.functionCallStart;
import static io.turnstream.topology.Events.responseDone;
import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.model.Json;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.ToolCall;
import io.turnstream.runtime.Settings;
import io.turnstream.runtime.TenantClaims;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The topology trusts {@code response_start.tenant_id} only as far as its writer may claim it: with a claim
 * key, only a tenant the gateway signed for the run; without one, only a well-formed tenant id. Anything else
 * is dead-lettered with the reason, and the turn never starts, so none of its tool calls reach the executor.
 */
class TenantClaimTest {

    private static final String KEY = "a-claim-key-of-at-least-32-characters";
    private static final TenantClaims GATEWAY = TenantClaims.withKey(KEY, "the test");

    @TempDir
    Path dir;

    private TopologyHarness topology;

    @AfterEach
    void close() {
        if (topology != null) {
            topology.close();
        }
    }

    private TopologyHarness withClaimKey() throws Exception {
        Path keyFile = Files.writeString(dir.resolve("claim-key"), KEY + "\n");
        Properties props = new Properties();
        props.setProperty(TenantClaims.KEY_FILE, keyFile.toString());
        return new TopologyHarness(TopologyConfig.from(Settings.of(props)));
    }

    private static Headers signed(String tenantId, String runId) {
        Headers headers = new RecordHeaders();
        GATEWAY.addTo(headers, tenantId, runId);
        return headers;
    }

    private static StreamPayload.ResponseStart start(String turnId, String tenant) {
        return new StreamPayload.ResponseStart("resp-" + turnId, turnId, "thread-1", null, "model-x", "anthropic", 0, tenant);
    }

    private void callATool(String runId) {
        topology.send(runId, functionCallStart("fc", "write_file", "call-1"));
        topology.send(runId, functionCallDone("fc", "write_file", "{\"path\":\"x\"}", "call-1"));
        topology.send(runId, responseDone(ResponseStatus.COMPLETE));
    }

    @Test
    void aSignedTenantStartsItsTurnAndItsClaimGoesWithTheToolCalls() throws Exception {
        topology = withClaimKey();
        Headers claim = signed("tenant-a", "run-1");
        topology.send("run-1", start("turn-1", "tenant-a"), claim);
        callATool("run-1");

        TestRecord<String, byte[]> call = topology.toolCallRecords().get(0);
        assertThat(Json.fromBytes(call.value(), ToolCall.class).tenantId()).isEqualTo("tenant-a");
        assertThat(TenantClaims.claimIn(call.headers())).isEqualTo(TenantClaims.claimIn(claim));
        assertThat(topology.deadLetters()).isEmpty();
    }

    @Test
    void aTenantTheGatewayDidNotSignIsDeadLetteredAndItsTurnNeverStarts() throws Exception {
        topology = withClaimKey();
        topology.send("run-2", start("turn-2", "tenant-b"), signed("tenant-a", "run-2"));
        callATool("run-2");
        topology.send("run-3", start("turn-3", null));
        topology.send("run-4", start("turn-4", "tenant-a"), signed("tenant-a", "run-other"));

        assertThat(topology.upserts()).as("no turn started").isEmpty();
        assertThat(topology.toolCallRecords()).as("no tool call reaches the executor").isEmpty();
        assertThat(topology.deadLetters()).extracting(TopologyHarness.DeadLetter::reason)
                .anySatisfy(reason -> assertThat(reason).isEqualTo("response_start not trusted: the " + TenantClaims.HEADER
                        + " header does not verify for tenant tenant-b and run run-2: the tenant field is not the one a "
                        + "gateway signed"))
                .anySatisfy(reason -> assertThat(reason).startsWith("item_start before response_start"))
                .anySatisfy(reason -> assertThat(reason).isEqualTo("response_start not trusted: no " + TenantClaims.HEADER
                        + " header: the claim of no tenant for run run-3 is not signed by a gateway"))
                .anySatisfy(reason -> assertThat(reason).contains("does not verify for tenant tenant-a and run run-4"));
    }

    @Test
    void withoutAKeyOnlyAWellFormedTenantIdIsTrusted() {
        topology = new TopologyHarness();
        topology.send("run-5", start("turn-5", "../tenant-a"));
        topology.send("run-6", start("turn-6", "tenant-a"));

        assertThat(topology.deadLetters()).extracting(TopologyHarness.DeadLetter::reason).containsExactly(
                "response_start not trusted: tenant id '../tenant-a' is not a tenant id (1 to 64 letters, digits, '_', "
                        + "'.' or '-', starting with a letter or digit)");
        assertThat(topology.upserts()).as("turn-6's turn_started").hasSize(1);
    }
}
