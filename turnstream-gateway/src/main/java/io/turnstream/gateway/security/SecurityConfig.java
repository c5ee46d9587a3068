package io.turnstream.gateway.security;

import io.turnstream.runtime.Settings;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * What protects the gateway's public API ({@code turnstream.gateway.*} keys; the keys themselves come from
 * a file or {@value ApiKeys#ENV}, never from the properties, so they are in no config dump).
 *
 * @param insecure          listen on a non-loopback address without keys (never the default)
 * @param allowedOrigins    browser origins other than the gateway's own that may call it (CORS); empty: none
 * @param maxBodyBytes      the largest request body
 * @param maxFieldChars     the longest string anywhere in a JSON body
 * @param unknownTurnGrace  how long a request for a turn no one knows yet waits for it to appear before 404
 * @param maxRequestsPerSecond per tenant, on this instance (a token bucket with a burst of as many)
 * @param maxOpenStreams event streams (SSE) open at once per tenant, on this instance
 */
public record SecurityConfig(ApiKeys keys, boolean insecure, List<String> allowedOrigins, long maxBodyBytes,
                             int maxFieldChars, Duration unknownTurnGrace, int maxRequestsPerSecond, int maxOpenStreams) {

    public static final String PREFIX = "turnstream.gateway.";
    public static final String API_KEYS_FILE = PREFIX + "api-keys-file";
    public static final String INSECURE = PREFIX + "insecure";

    public SecurityConfig {
        allowedOrigins = List.copyOf(allowedOrigins);
    }

    /** @param environment where {@value ApiKeys#ENV} is looked up */
    public static SecurityConfig from(Settings settings, Map<String, String> environment) {
        String file = settings.get(API_KEYS_FILE, "").strip();
        ApiKeys keys = ApiKeys.load(file.isEmpty() ? null : Path.of(file), environment.get(ApiKeys.ENV));
        List<String> origins = Arrays.stream(settings.get(PREFIX + "cors.allowed-origins", "").split(","))
                .map(String::strip).filter(origin -> !origin.isEmpty()).toList();
        origins.forEach(SecurityConfig::requireOrigin);
        return new SecurityConfig(keys,
                Boolean.parseBoolean(settings.get(INSECURE, "false").strip()),
                origins,
                positive(settings, "max-body-bytes", 1024 * 1024),
                (int) positive(settings, "max-field-chars", 200_000),
                Duration.ofMillis(positive(settings, "unknown-turn-grace-ms", 3_000)),
                (int) positive(settings, "tenant.max-requests-per-second", 50),
                (int) positive(settings, "tenant.max-open-streams", 64));
    }

    /**
     * Refuses to serve an API that anyone on the network could use: without keys, only a loopback address,
     * unless {@link #insecure()} says the operator means it.
     */
    public void requireSafeToListenOn(String host) {
        if (keys.configured() || insecure || isLoopback(host)) {
            return;
        }
        throw new IllegalArgumentException("refusing to listen on " + host + " without API keys: anyone who reaches it "
                + "could spend the provider keys and run tools. Configure keys (" + ApiKeys.ENV + " or --api-keys-file), "
                + "listen on 127.0.0.1, or pass --insecure");
    }

    /** True when only this machine can reach the address. */
    public static boolean isLoopback(String host) {
        try {
            return InetAddress.getByName(host).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }

    private static void requireOrigin(String origin) {
        if (!origin.matches("https?://[^/\\s]+")) {
            throw new IllegalArgumentException(PREFIX + "cors.allowed-origins: '" + origin
                    + "' is not an origin such as https://app.example.com (scheme, host and optional port, no path)");
        }
    }

    private static long positive(Settings settings, String key, long fallback) {
        long value = settings.getLong(PREFIX + key, fallback);
        if (value < 1) {
            throw new IllegalArgumentException(PREFIX + key + " must be a positive whole number, got " + value);
        }
        return value;
    }
}
