package io.turnstream.gateway.security;

import io.turnstream.model.TenantIds;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * The gateway's API keys, each naming a tenant. Entries are {@code tenant:key}, one per line in a file
 * ({@code #} starts a comment) or separated by commas or newlines in {@value #ENV}. Only SHA-256 digests of
 * the keys are held, so neither a log line nor a heap dump shows one, and {@link #toString()} names tenants only.
 */
public final class ApiKeys {

    /** The environment variable holding {@code tenant:key} entries. */
    public static final String ENV = "TURNSTREAM_API_KEYS";
    /** Shorter keys are refused: they could be guessed. */
    public static final int MIN_KEY_LENGTH = 16;

    private static final ApiKeys NONE = new ApiKeys(Map.of());

    /** digest of a key (hex) -> tenant */
    private final Map<String, String> tenantsByDigest;

    private ApiKeys(Map<String, String> tenantsByDigest) {
        this.tenantsByDigest = Map.copyOf(tenantsByDigest);
    }

    public static ApiKeys none() {
        return NONE;
    }

    /**
     * @param file null for none
     * @param environmentValue the value of {@value #ENV}, null for none
     * @throws IllegalArgumentException naming the file or variable and the entry's position (never the key)
     */
    public static ApiKeys load(Path file, String environmentValue) {
        Map<String, String> digests = new HashMap<>();
        if (file != null) {
            List<String> lines;
            try {
                lines = Files.readAllLines(file, StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new IllegalArgumentException("cannot read the API keys file " + file + ": " + e.getMessage(), e);
            }
            for (int i = 0; i < lines.size(); i++) {
                String line = lines.get(i).strip();
                if (!line.isEmpty() && !line.startsWith("#")) {
                    add(digests, line, file + " line " + (i + 1));
                }
            }
        }
        if (environmentValue != null) {
            List<String> entries = new ArrayList<>();
            for (String entry : environmentValue.split("[,\\n]")) {
                if (!entry.isBlank()) {
                    entries.add(entry.strip());
                }
            }
            for (int i = 0; i < entries.size(); i++) {
                add(digests, entries.get(i), ENV + " entry " + (i + 1));
            }
        }
        return digests.isEmpty() ? NONE : new ApiKeys(digests);
    }

    private static void add(Map<String, String> digests, String entry, String where) {
        int colon = entry.indexOf(':');
        if (colon < 0) {
            throw new IllegalArgumentException(where + ": an entry is tenant:key");
        }
        String tenant = entry.substring(0, colon).strip();
        String key = entry.substring(colon + 1).strip();
        if (!TenantIds.isValid(tenant)) {
            throw new IllegalArgumentException(where + ": a tenant is " + TenantIds.DESCRIPTION);
        }
        if (key.length() < MIN_KEY_LENGTH || key.chars().anyMatch(Character::isWhitespace)) {
            throw new IllegalArgumentException(where + ": the key of tenant " + tenant + " must be at least "
                    + MIN_KEY_LENGTH + " characters without spaces");
        }
        if (digests.putIfAbsent(digest(key), tenant) != null) {
            throw new IllegalArgumentException(where + ": the same key is given twice");
        }
    }

    /** True when keys are configured, and so every route but health needs one. */
    public boolean configured() {
        return !tenantsByDigest.isEmpty();
    }

    /** The tenant a presented key belongs to. */
    public Optional<String> tenantOf(String key) {
        return key == null || key.isEmpty() ? Optional.empty() : Optional.ofNullable(tenantsByDigest.get(digest(key)));
    }

    public Set<String> tenants() {
        return new TreeSet<>(tenantsByDigest.values());
    }

    private static String digest(String key) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }

    @Override
    public String toString() {
        return configured() ? tenantsByDigest.size() + " API keys of tenants " + tenants() : "no API keys";
    }
}
