package io.turnstream.gateway;

import io.turnstream.runtime.Settings;
import java.time.Duration;

/**
 * How gateways share the turns ({@code turnstream.gateway.*}), with the defaults.
 *
 * @param groupId the consumer group of the gateways that run turns together; also names their
 *                transactional ids
 * @param commitInterval how often the raw events of running turns are committed (read_committed
 *                       readers see them then)
 * @param drainTimeout how long a stopping gateway waits for its turns to reach a step boundary
 *                     before it hands them over mid-step
 */
record OwnershipConfig(String groupId, Duration commitInterval, Duration drainTimeout) {

    static OwnershipConfig from(Settings settings) {
        return new OwnershipConfig(
                settings.get(GatewayConfig.PREFIX + "group-id", "turnstream-gateway"),
                Duration.ofMillis(settings.getLong(GatewayConfig.PREFIX + "commit-interval-ms", 100)),
                Duration.ofMillis(settings.getLong(GatewayConfig.PREFIX + "drain-timeout-ms", 30_000)));
    }
}
