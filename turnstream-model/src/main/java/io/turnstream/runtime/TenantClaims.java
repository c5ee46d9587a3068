package io.turnstream.runtime;

import io.turnstream.model.TenantIds;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/**
 * Who may say which tenant a turn belongs to. Kafka tells a consumer nothing about who produced a record,
 * so a tenant field on a topic is only as trustworthy as everyone who can write that topic. With a claim
 * key, shared by the gateway, the topology and the tool executor, the gateway (which resolved the tenant
 * from an API key) signs each turn: the record header {@value #HEADER} on its {@code response_start} holds
 * an HMAC-SHA256 of the tenant (empty for a turn of no tenant) and the run id. The topology trusts
 * {@code response_start.tenant_id} only when the claim verifies and passes the claim on with the turn's
 * tool calls; the executor runs a call in a tenant's workspace only when it verifies. So a principal that
 * can write {@code llm.raw-events} or {@code llm.tool-calls} but holds no key can claim no tenant, and not
 * "no tenant" either (a turn of no tenant runs at the workspace root, which holds every tenant's directory).
 * The key comes from {@value #ENV} or the file named by {@value #KEY_FILE}, never from a topic or a log.
 * Without a key, only the form of the tenant id is checked and the ACLs alone decide who writes those topics.
 */
public final class TenantClaims {

    public static final String HEADER = "turnstream.tenant-claim";
    public static final String ENV = "TURNSTREAM_TENANT_CLAIM_KEY";
    public static final String KEY_FILE = "turnstream.tenant-claims.key-file";
    /** Checks only the form of tenant ids: for deployments without a claim key. */
    public static final TenantClaims UNSIGNED = new TenantClaims(null);
    private static final int MIN_KEY_CHARS = 32;
    private static final String ALGORITHM = "HmacSHA256";

    private final SecretKeySpec key;

    private TenantClaims(byte[] key) {
        this.key = key == null ? null : new SecretKeySpec(key, ALGORITHM);
    }

    /** The key from {@value #ENV}, else from the file {@value #KEY_FILE} names; {@link #UNSIGNED} without either. */
    public static TenantClaims from(Settings settings, Map<String, String> environment) {
        String fromEnvironment = environment.get(ENV);
        if (fromEnvironment != null && !fromEnvironment.isBlank()) {
            return withKey(fromEnvironment.strip(), ENV);
        }
        String file = settings.get(KEY_FILE, "").strip();
        if (file.isEmpty()) {
            return UNSIGNED;
        }
        try {
            return withKey(Files.readString(Path.of(file), StandardCharsets.UTF_8).strip(), file);
        } catch (IOException e) {
            throw new UncheckedIOException(KEY_FILE + ": cannot read " + file, e);
        }
    }

    /** @param source where the key came from, for the message when it is too short (never the key itself) */
    public static TenantClaims withKey(String key, String source) {
        if (key.length() < MIN_KEY_CHARS) {
            throw new IllegalArgumentException("the tenant claim key from " + source + " has " + key.length()
                    + " characters; it needs at least " + MIN_KEY_CHARS + " (e.g. openssl rand -base64 32)");
        }
        return new TenantClaims(key.getBytes(StandardCharsets.UTF_8));
    }

    /** Whether claims are signed and checked (a key is configured). */
    public boolean signed() {
        return key != null;
    }

    /** Adds the turn's claim to a record's headers; nothing without a key. */
    public void addTo(Headers headers, String tenantId, String runId) {
        if (key != null) {
            headers.remove(HEADER);
            headers.add(HEADER, claim(tenantId, runId).getBytes(StandardCharsets.UTF_8));
        }
    }

    /** The claim a record carries, or null. */
    public static String claimIn(Headers headers) {
        Header header = headers.lastHeader(HEADER);
        return header == null || header.value() == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }

    /**
     * Why a record's tenant may not be trusted, or null when it may: the tenant id is malformed, or (with a
     * key) the claim is missing or was not made for this tenant and run.
     *
     * @param tenantId the record's tenant field, null for a turn of no tenant
     * @param claim the record's {@value #HEADER} header, or null
     */
    public String problem(String tenantId, String runId, String claim) {
        if (tenantId != null && !TenantIds.isValid(tenantId)) {
            return "tenant id '" + tenantId + "' is not a tenant id (" + TenantIds.DESCRIPTION + ")";
        }
        if (key == null) {
            return null;
        }
        String who = tenantId == null ? "no tenant" : "tenant " + tenantId;
        if (claim == null) {
            return "no " + HEADER + " header: the claim of " + who + " for run " + runId + " is not signed by a gateway";
        }
        boolean verifies = MessageDigest.isEqual(claim(tenantId, runId).getBytes(StandardCharsets.UTF_8),
                claim.getBytes(StandardCharsets.UTF_8));
        return verifies ? null : "the " + HEADER + " header does not verify for " + who + " and run " + runId
                + ": the tenant field is not the one a gateway signed";
    }

    private String claim(String tenantId, String runId) {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(key);
            byte[] signed = mac.doFinal(((tenantId == null ? "" : tenantId) + "\n" + runId).getBytes(StandardCharsets.UTF_8));
            return Base64.getUrlEncoder().withoutPadding().encodeToString(signed);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(ALGORITHM + " is part of every Java runtime", e);
        }
    }
}
