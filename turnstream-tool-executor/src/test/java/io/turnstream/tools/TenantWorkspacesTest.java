package io.turnstream.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.model.ToolResult;
import java.nio.file.Files;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Each tenant's tools work in a directory of their own; nothing of one tenant is visible to another's. */
class TenantWorkspacesTest {

    private SchedulerHarness harness = new SchedulerHarness(ToolRegistry.installed());

    @AfterEach
    void close() {
        harness.close();
    }

    @Test
    void aTenantsFilesAreInItsOwnDirectoryAndInvisibleToAnotherTenant() throws Exception {
        succeeded(harness.callOf("tenant-a", "thread-1", "turn-a", "write_file", "{\"path\": \"secret.txt\", \"content\": \"a's secret\"}"));

        assertThat(harness.workspace.resolve("tenants/tenant-a/secret.txt")).hasContent("a's secret");
        assertThat(failed(harness.callOf("tenant-b", "thread-1", "turn-b", "read_file", "{\"path\": \"secret.txt\"}")).error().code())
                .isEqualTo(ToolErrors.TOOL_ERROR);
        assertThat(failed(harness.callOf("tenant-b", "thread-1", "turn-b", "read_file",
                "{\"path\": \"../tenant-a/secret.txt\"}")).error().code()).isEqualTo(ToolErrors.ACCESS_DENIED);
        assertThat(harness.output(harness.callOf("tenant-b", "thread-1", "turn-b", "grep", "{\"pattern\": \"secret\"}")))
                .doesNotContain("secret.txt");
        assertThat(harness.output(harness.callOf("tenant-a", "thread-1", "turn-a2", "read_file", "{\"path\": \"secret.txt\"}")))
                .contains("a's secret");
    }

    @Test
    void aCallOfNoTenantIsRefusedOnceTheWorkspaceHoldsTenantsDirectories() throws Exception {
        Files.writeString(harness.workspace.resolve("shared.txt"), "for everyone");
        assertThat(harness.output(harness.call("turn-1", "read_file", "{\"path\": \"shared.txt\"}"))).contains("for everyone");

        succeeded(harness.callOf("tenant-a", "thread-1", "turn-a", "write_file", "{\"path\": \"mine.txt\", \"content\": \"x\"}"));

        ToolResult refused = failed(harness.call("turn-2", "list_files", "{}"));
        assertThat(refused.error().code()).isEqualTo(ToolErrors.ACCESS_DENIED);
        assertThat(refused.error().message()).contains("run the gateway with API keys");
    }

    @Test
    void aTenantIdThatIsNotAPlainNameIsRefused() {
        ToolResult refused = failed(harness.callOf("../escape", "thread-1", "turn-x", "list_files", "{}"));

        assertThat(refused.error().code()).isEqualTo(ToolErrors.ACCESS_DENIED);
        assertThat(harness.workspace.resolve("escape")).doesNotExist();
    }

    @Test
    void withOneWorkspacePerThreadThreadsOfATenantAreApartToo() throws Exception {
        harness.close();
        harness = new SchedulerHarness(ToolRegistry.installed(), "workspace-per-thread", "true");

        succeeded(harness.callOf("tenant-a", "thread-1", "turn-1", "write_file", "{\"path\": \"notes.md\", \"content\": \"one\"}"));
        succeeded(harness.callOf("tenant-a", "../../thread 2", "turn-2", "write_file", "{\"path\": \"notes.md\", \"content\": \"two\"}"));

        assertThat(harness.workspace.resolve("tenants/tenant-a/threads/thread-1/notes.md")).hasContent("one");
        try (var threads = Files.list(harness.workspace.resolve("tenants/tenant-a/threads"))) {
            assertThat(threads.map(dir -> dir.getFileName().toString()))
                    .as("a thread id that is no plain name becomes a digest").hasSize(2).contains("thread-1")
                    .anySatisfy(name -> assertThat(name).startsWith("t-"));
        }
    }

    private ToolResult succeeded(String callId) {
        ToolResult result = harness.awaitResult(callId);
        assertThat(result.success()).as(String.valueOf(result.error())).isTrue();
        return result;
    }

    private ToolResult failed(String callId) {
        ToolResult result = harness.awaitResult(callId);
        assertThat(result.success()).isFalse();
        return result;
    }
}
