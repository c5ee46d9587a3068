package io.turnstream.gateway.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ApiKeysTest {

    private static final String KEY_A = "a-long-enough-key-0001";
    private static final String KEY_B = "a-long-enough-key-0002";

    @TempDir
    Path dir;

    @Test
    void keysFromAFileAndTheEnvironmentEachNameTheirTenant() throws Exception {
        Path file = Files.writeString(dir.resolve("keys"), "# comment\n\ntenant-a:" + KEY_A + "\n");

        ApiKeys keys = ApiKeys.load(file, "tenant-b:" + KEY_B + ", tenant-a:a-rotated-key-of-tenant-a");

        assertThat(keys.configured()).isTrue();
        assertThat(keys.tenantOf(KEY_A)).hasValue("tenant-a");
        assertThat(keys.tenantOf("a-rotated-key-of-tenant-a")).hasValue("tenant-a");
        assertThat(keys.tenantOf(KEY_B)).hasValue("tenant-b");
        assertThat(keys.tenantOf("a-long-enough-key-0003")).isEmpty();
        assertThat(keys.tenantOf("")).isEmpty();
    }

    @Test
    void noKeysMeansNotConfigured() {
        assertThat(ApiKeys.load(null, null).configured()).isFalse();
        assertThat(ApiKeys.load(null, " , ").configured()).isFalse();
    }

    @Test
    void nothingPrintsAKey() {
        ApiKeys keys = ApiKeys.load(null, "tenant-a:" + KEY_A);

        assertThat(keys.toString()).contains("tenant-a").doesNotContain(KEY_A);
    }

    @Test
    void badEntriesAreRefusedWithWhereTheyAreButNotTheKey() {
        assertThatThrownBy(() -> ApiKeys.load(null, "tenant-a:short"))
                .hasMessageContaining(ApiKeys.ENV + " entry 1").hasMessageContaining("at least 16 characters")
                .hasMessageNotContaining("short:");
        assertThatThrownBy(() -> ApiKeys.load(null, "../etc:" + KEY_A)).hasMessageContaining("a tenant is 1 to 64");
        assertThatThrownBy(() -> ApiKeys.load(null, KEY_A)).hasMessageContaining("an entry is tenant:key");
        assertThatThrownBy(() -> ApiKeys.load(null, "a:" + KEY_A + ",b:" + KEY_A))
                .hasMessageContaining("entry 2: the same key is given twice").hasMessageNotContaining(KEY_A);
        assertThatThrownBy(() -> ApiKeys.load(dir.resolve("missing"), null)).hasMessageContaining("cannot read the API keys file");
    }
}
