package io.turnstream.gateway.ownership;

import io.turnstream.gateway.loop.LoopConfig;
import io.turnstream.runtime.Settings;
import io.turnstream.runtime.TenantClaims;
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
 * @param rebalanceHandover how long a rebalance (a gateway joins) waits for the turns of the partitions
 *                          it moves to reach a step boundary; the group's other partitions wait with it
 * @param claims signs each turn's tenant on its {@code response_start} ({@link TenantClaims})
 */
public record OwnershipConfig(String groupId, Duration commitInterval, Duration drainTimeout, Duration rebalanceHandover,
                              TenantClaims claims) {

    public static OwnershipConfig from(Settings settings) {
        return new OwnershipConfig(
                settings.get(LoopConfig.PREFIX + "group-id", "turnstream-gateway"),
                Duration.ofMillis(settings.getLong(LoopConfig.PREFIX + "commit-interval-ms", 100)),
                Duration.ofMillis(settings.getLong(LoopConfig.PREFIX + "drain-timeout-ms", 30_000)),
                Duration.ofMillis(settings.getLong(LoopConfig.PREFIX + "rebalance-handover-ms", 5_000)),
                TenantClaims.from(settings, System.getenv()));
    }
}
