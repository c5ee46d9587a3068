package io.turnstream.gateway.view;

import io.turnstream.runtime.Settings;
import java.time.Duration;

/**
 * Settings of the gateway's turn views ({@code turnstream.gateway.view.*}): how much of each turn's
 * upsert stream is kept for exact resumes, how many turns are kept, and how clients are kept alive.
 *
 * @param replayBuffer upserts kept per turn for {@code Last-Event-ID} resumes
 * @param maxBufferedTurns turns whose replay buffers are kept (the least recently updated go first)
 * @param maxStateTurns turns kept in the materialised view of {@code llm.item-state}
 * @param maxQueuedPerClient upserts waiting for one slow SSE client before it is disconnected
 *     (it reconnects with {@code Last-Event-ID} and loses nothing)
 * @param heartbeat how often an idle SSE stream gets a comment line, so proxies keep it open and
 *     a dead client is noticed
 */
public record TurnViewConfig(int replayBuffer, int maxBufferedTurns, int maxStateTurns, int maxQueuedPerClient,
                             Duration heartbeat) {

    public static final String PREFIX = "turnstream.gateway.view.";

    public TurnViewConfig {
        if (replayBuffer < 1 || maxBufferedTurns < 1 || maxStateTurns < 1 || maxQueuedPerClient < 1
                || heartbeat.isNegative() || heartbeat.isZero()) {
            throw new IllegalArgumentException(PREFIX + "* sizes and heartbeat-ms must be positive");
        }
    }

    public static TurnViewConfig from(Settings settings) {
        return new TurnViewConfig(
                (int) settings.getLong(PREFIX + "replay-buffer", 2_000),
                (int) settings.getLong(PREFIX + "max-buffered-turns", 1_000),
                (int) settings.getLong(PREFIX + "max-state-turns", 10_000),
                (int) settings.getLong(PREFIX + "max-queued-per-client", 10_000),
                Duration.ofMillis(settings.getLong(PREFIX + "heartbeat-ms", 15_000)));
    }
}
