package io.turnstream.gateway.thread;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.gateway.ownership.TurnResumer;
import io.turnstream.gateway.provider.ErrorCodes;
import io.turnstream.gateway.turn.TurnRequest;
import io.turnstream.gateway.view.TurnSnapshot;
import io.turnstream.gateway.view.TurnViews;
import io.turnstream.model.ScopedIds;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.model.WireFormat;
import io.turnstream.schema.SchemaRegistryException;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads what Kafka holds of a thread for {@link ThreadConversation}: its earlier requests and their step checkpoints
 * from its partition of {@code llm.turn-requests} (the gateway running the new turn owns that partition), and the
 * items of those turns from {@code llm.item-state} through the gateway's views. The turn before the new one may have
 * just ended here; its items are waited for, up to {@link #ITEMS_WAIT}. A record of the thread that cannot be read is
 * left out; one that cannot be read for now (on Avro, a schema registry that cannot be reached) is not: the
 * {@link SchemaRegistryException} goes to the turn, which runs once its partition is taken over again after a backoff
 * rather than with part of its conversation.
 */
public final class ThreadHistory implements ThreadRebuild {

    private static final Logger LOG = LoggerFactory.getLogger(ThreadHistory.class);
    static final Duration ITEMS_WAIT = Duration.ofSeconds(30);
    /** Records are stamped by the clocks of different machines. */
    private static final Duration CLOCK_SKEW = Duration.ofMinutes(1);
    /** The error codes of a turn ended before it ran. */
    private static final Set<String> NEVER_RAN = Set.of(ErrorCodes.THREAD_BUSY, ErrorCodes.IDEMPOTENCY_KEY_REUSED);

    private final TurnViews views;
    private final TurnResumer kafka;
    private final WireFormat format;
    private final Function<TurnRequest, String> providerOf;

    /** @param providerOf the provider a request runs with, by this gateway's configuration */
    public ThreadHistory(TurnViews views, TurnResumer kafka, WireFormat format, Function<TurnRequest, String> providerOf) {
        this.views = views;
        this.kafka = kafka;
        this.format = format;
        this.providerOf = providerOf;
    }

    /**
     * The request with its thread's conversation before it, when it continues its thread, and the earlier turns it
     * names replaced by their steps; else as it is.
     *
     * @param offset the request's offset on {@code llm.turn-requests}: the turns requested before it are its past
     * @param before the thread's turn that ran here just before it, if any: its items are waited for
     * @throws SchemaRegistryException when a record of the thread cannot be read for now
     */
    @Override
    public TurnRequest rebuild(TurnRequestRecord record, TurnRequest request, long offset, Optional<String> before) {
        if (!request.fromThread() && !ThreadConversation.namesEarlierTurns(request.history())) {
            return request;
        }
        awaitItemState();
        before.ifPresent(this::awaitItems);
        Optional<Long> since = views.threadSince(record.tenantId(), record.threadId());
        if (since.isEmpty()) {
            return ThreadConversation.rebuild(List.of(), providerOf.apply(request), request);
        }
        Map<String, TurnRequestRecord> requests = new LinkedHashMap<>();
        Map<String, Map<Integer, JsonNode>> checkpoints = new HashMap<>();
        for (ConsumerRecord<String, byte[]> read : kafka.threadRecords(
                ScopedIds.threadKey(record.tenantId(), record.threadId()),
                Instant.ofEpochMilli(Math.max(0, since.get() - CLOCK_SKEW.toMillis())))) {
            TurnRequestRecord earlier = read(read);
            if (earlier == null || earlier.turnId() == null || earlier.turnId().equals(record.turnId())) {
                continue;
            }
            if (earlier.startsTurn() && read.offset() < offset) {
                requests.putIfAbsent(earlier.turnId(), earlier);
            } else if (!earlier.startsTurn() && earlier.step() != null && earlier.checkpoint() != null) {
                checkpoints.computeIfAbsent(earlier.turnId(), id -> new HashMap<>())
                        .put(earlier.step().intValue(), earlier.checkpoint());
            }
        }
        List<ThreadConversation.PastTurn> past = new ArrayList<>();
        for (TurnRequestRecord earlier : requests.values()) {
            Optional<TurnSnapshot> shown = views.snapshot(earlier.turnId(), null);
            if (shown.map(ThreadHistory::endedUnrun).orElse(false)) {
                continue;
            }
            TurnRequest said;
            try {
                said = TurnRequest.read(earlier.request());
            } catch (IllegalArgumentException unreadable) {
                LOG.warn("thread {}: turn {} has a request that cannot be read; left out", record.threadId(),
                        earlier.turnId());
                continue;
            }
            past.add(new ThreadConversation.PastTurn(earlier.turnId(), earlier.runId(), said, providerOrNull(said),
                    checkpoints.getOrDefault(earlier.turnId(), Map.of()),
                    shown.map(TurnSnapshot::items).orElse(List.of())));
        }
        return ThreadConversation.rebuild(past, providerOf.apply(request), request);
    }

    /**
     * A turn refused by the gateway that ran its thread before it started (its thread was busy, or another request
     * took its Idempotency-Key): its request was never part of the conversation.
     */
    private static boolean endedUnrun(TurnSnapshot turn) {
        return turn.turn() != null && turn.turn().error() != null
                && NEVER_RAN.contains(turn.turn().error().code());
    }

    private String providerOrNull(TurnRequest request) {
        try {
            return providerOf.apply(request);
        } catch (RuntimeException notConfiguredHere) {
            return null;
        }
    }

    /**
     * Waits until the views hold what {@code llm.item-state} held when this gateway started: before that, a thread's
     * earlier turns may be missing from them, and the model would be called without its conversation.
     */
    private void awaitItemState() {
        try {
            views.loaded().get(ITEMS_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            LOG.warn("the views have not read llm.item-state to where it stood at start-up after {} s; the thread goes on "
                    + "with what they show", ITEMS_WAIT.toSeconds());
        }
    }

    /** Waits until the views have read the end of the turn, so its items are all there. */
    private void awaitItems(String turnId) {
        CompletableFuture<TurnSnapshot> end = views.ended(turnId);
        try {
            end.get(ITEMS_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            LOG.warn("turn {} has not ended in the views after {} s; its thread goes on with what they show",
                    turnId, ITEMS_WAIT.toSeconds());
        } finally {
            // no longer waited for: the views let it go (it stayed until the turn's end, maybe for good)
            end.cancel(false);
        }
    }

    /**
     * The thread's record; null when it cannot be read.
     *
     * @throws SchemaRegistryException when it cannot be read for now: the turn would miss it
     */
    TurnRequestRecord read(ConsumerRecord<String, byte[]> record) {
        try {
            return format.read(record.topic(), record.value(), TurnRequestRecord.class);
        } catch (SchemaRegistryException registryDown) {
            throw registryDown;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
