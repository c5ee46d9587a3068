package io.turnstream.bench;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.bench.SimulatedTurn.Item;
import io.turnstream.model.ChangeType;
import io.turnstream.model.Json;
import io.turnstream.model.PayloadType;
import io.turnstream.model.UiPayloadType;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * Matches what a {@code read_committed} consumer sees against the intended send times of the
 * simulated turns, never against the actual send times: a producer that falls behind adds its
 * delay to the latency instead of hiding it (no coordinated omission).
 *
 * <p>Two latencies per upsert: <b>content latency</b>, the definition, is recorded for
 * every delta, from its intended send time to the first upsert whose content contains it, so it
 * includes the time a delta waits for its item to reach the next gradient threshold; <b>emit
 * latency</b> is recorded once per upsert, from the intended send time of the newest event it
 * reflects (the delta that crossed the threshold, or the item_done), so it is the pipeline's own
 * delay: processing, the exactly-once commit and the consumer's fetch. Only events intended within
 * the measurement window are recorded. A third, <b>append latency</b>, is content latency through
 * {@code llm.item-appends}: per delta, to the first append that completes it. Handlers run on
 * consumer threads (one per topic); registration on the producer's.
 */
final class LatencyTracker {

    private static final long MAX_TRACKED_NANOS = TimeUnit.MINUTES.toNanos(10);

    private final long intervalNanos;
    private final Map<String, Progress> turns = new ConcurrentHashMap<>();
    private final Histogram contentLatency = new Histogram(MAX_TRACKED_NANOS, 3);
    private final Histogram emitLatency = new Histogram(MAX_TRACKED_NANOS, 3);
    private final Histogram appendLatency = new Histogram(MAX_TRACKED_NANOS, 3);
    private long appendRecordBytes;
    private long appendTextBytes;
    private long allAppendTextBytes;
    private volatile long windowFrom = Long.MAX_VALUE;
    private volatile long windowTo = Long.MAX_VALUE;
    private volatile long upsertsInWindow;
    private volatile long turnsCompleted;

    /** How far one turn's items have been seen; written by the consumer thread only. */
    private static final class Progress {
        final SimulatedTurn turn;
        int reasoningSeen;
        int messageSeen;
        /** Deltas of each item (by {@link Item#ordinal()}) shown by the appends so far. */
        final int[] appended = new int[Item.values().length];

        Progress(SimulatedTurn turn) {
            this.turn = turn;
        }

        int seen(Item item) {
            return item == Item.REASONING ? reasoningSeen : messageSeen;
        }

        void seen(Item item, int deltas) {
            if (item == Item.REASONING) {
                reasoningSeen = deltas;
            } else {
                messageSeen = deltas;
            }
        }
    }

    LatencyTracker(long intervalNanos) {
        this.intervalNanos = intervalNanos;
    }

    /** Called before the turn's first event is sent. */
    void register(SimulatedTurn turn) {
        turns.put(turn.runId, new Progress(turn));
    }

    /** Drops a turn that was registered but never sent. */
    void forget(String runId) {
        turns.remove(runId);
    }

    /** Records events intended in {@code [from, to)} from now on; clears what was recorded before. */
    synchronized void window(long fromNanos, long toNanos) {
        contentLatency.reset();
        emitLatency.reset();
        appendLatency.reset();
        appendRecordBytes = 0;
        appendTextBytes = 0;
        upsertsInWindow = 0;
        windowFrom = fromNanos;
        windowTo = toNanos;
    }

    /** An upsert envelope of the topology, as read from its upserts topic. */
    void onUpsert(byte[] envelopeBytes, long visibleNanos) {
        JsonNode envelope;
        try {
            envelope = Json.MAPPER.readTree(envelopeBytes);
        } catch (IOException e) {
            throw new IllegalStateException("the topology wrote an upsert that is not JSON", e);
        }
        JsonNode payload = envelope.path("payload");
        String turnId = envelope.path("turnId").asText();
        Progress progress = turns.get(turnId.substring("turn-".length()));
        if (progress == null) {
            return;
        }
        if (PayloadType.TURN_EVENT.wire().equals(envelope.path("payloadType").asText())) {
            if (!UiPayloadType.TURN_STARTED.wire().equals(payload.path("type").asText())) {
                turns.remove(progress.turn.runId);
                turnsCompleted++;
            }
            return;
        }
        SimulatedTurn turn = progress.turn;
        Item item = payload.path("itemId").asText().equals(turn.itemId(Item.REASONING)) ? Item.REASONING : Item.MESSAGE;
        int contained = Math.min(turn.deltas(item), payload.path("content").asText().length() / turn.deltaChars);
        boolean completed = ChangeType.COMPLETED.wire().equals(payload.path("changeType").asText());
        record(progress, item, contained, completed, visibleNanos);
    }

    /**
     * An append of the topology, as read from its item-appends topic: every delta it completes gets
     * its <b>append latency</b>, from its intended send time to this append being visible.
     */
    void onAppend(String key, byte[] appendBytes, long visibleNanos) {
        JsonNode append;
        try {
            append = Json.MAPPER.readTree(appendBytes);
        } catch (IOException e) {
            throw new IllegalStateException("the topology wrote an append that is not JSON", e);
        }
        Progress progress = turns.get(append.path("turnId").asText().substring("turn-".length()));
        if (progress == null) {
            return;
        }
        SimulatedTurn turn = progress.turn;
        Item item = append.path("itemId").asText().equals(turn.itemId(Item.REASONING)) ? Item.REASONING : Item.MESSAGE;
        String text = append.path("text").asText();
        // The simulated text is ASCII: code points are chars.
        int contained = (int) Math.min(turn.deltas(item), (append.path("offset").asLong() + text.length()) / turn.deltaChars);
        synchronized (this) {
            for (int k = progress.appended[item.ordinal()]; k < contained; k++) {
                long intended = intended(turn, turn.deltaSlot(item, k));
                if (inWindow(intended)) {
                    appendLatency.recordValue(Math.max(0, visibleNanos - intended));
                }
            }
            progress.appended[item.ordinal()] = Math.max(progress.appended[item.ordinal()], contained);
            appendRecordBytes += (key == null ? 0 : key.getBytes(StandardCharsets.UTF_8).length) + appendBytes.length;
            appendTextBytes += text.getBytes(StandardCharsets.UTF_8).length;
            allAppendTextBytes += text.getBytes(StandardCharsets.UTF_8).length;
        }
    }

    private synchronized void record(Progress progress, Item item, int contained, boolean completed, long visibleNanos) {
        SimulatedTurn turn = progress.turn;
        for (int k = progress.seen(item); k < contained; k++) {
            long intended = intended(turn, turn.deltaSlot(item, k));
            if (inWindow(intended)) {
                contentLatency.recordValue(Math.max(0, visibleNanos - intended));
            }
        }
        progress.seen(item, Math.max(progress.seen(item), contained));
        int newestSlot = completed ? turn.doneSlot(item) : turn.deltaSlot(item, Math.max(0, contained - 1));
        long newest = intended(turn, newestSlot);
        if (inWindow(newest)) {
            emitLatency.recordValue(Math.max(0, visibleNanos - newest));
            upsertsInWindow++;
        }
    }

    /** A raw event copied by the pass-through app: its latency is both kinds at once. */
    synchronized void onCopiedEvent(String runId, String eventId, long visibleNanos) {
        Progress progress = turns.get(runId);
        if (progress == null) {
            return;
        }
        int index = Integer.parseInt(eventId.substring(eventId.lastIndexOf(':') + 1));
        Item item = progress.turn.deltaItem(index);
        if (item != null) {
            progress.seen(item, Math.max(progress.seen(item), progress.turn.deltaIndex(index) + 1));
        }
        long intended = intended(progress.turn, progress.turn.slot(index));
        if (inWindow(intended)) {
            emitLatency.recordValue(Math.max(0, visibleNanos - intended));
            contentLatency.recordValue(Math.max(0, visibleNanos - intended));
            upsertsInWindow++;
        }
        if (progress.turn.isLast(index)) {
            turns.remove(runId);
            turnsCompleted++;
        }
    }

    /**
     * Deltas intended within the window that no upsert has shown yet. Read from any thread while
     * the load runs on; a racy but monotone estimate, exact once the consumer is idle.
     */
    synchronized long owedDeltas() {
        long owed = 0;
        for (Progress progress : turns.values()) {
            for (Item item : Item.values()) {
                SimulatedTurn turn = progress.turn;
                for (int k = progress.seen(item); k < turn.deltas(item); k++) {
                    long intended = intended(turn, turn.deltaSlot(item, k));
                    if (intended >= windowTo) {
                        break;
                    }
                    if (intended >= windowFrom) {
                        owed++;
                    }
                }
            }
        }
        return owed;
    }

    int openTurns() {
        return turns.size();
    }

    long turnsCompleted() {
        return turnsCompleted;
    }

    synchronized long upsertsInWindow() {
        return upsertsInWindow;
    }

    synchronized Percentiles contentLatency() {
        return Percentiles.of(contentLatency);
    }

    synchronized Percentiles emitLatency() {
        return Percentiles.of(emitLatency);
    }

    synchronized Percentiles appendLatency() {
        return Percentiles.of(appendLatency);
    }

    /** Bytes of the append records (keys and values) over the text they carried, since the window opened; null without appends. */
    synchronized Double appendBytesPerTextByte() {
        return appendTextBytes == 0 ? null : (double) appendRecordBytes / appendTextBytes;
    }

    /** The text every append read so far carried, window or not. */
    synchronized long allAppendTextBytes() {
        return allAppendTextBytes;
    }

    private long intended(SimulatedTurn turn, int slot) {
        return turn.startNanos + slot * intervalNanos;
    }

    private boolean inWindow(long intendedNanos) {
        return intendedNanos >= windowFrom && intendedNanos < windowTo;
    }
}
