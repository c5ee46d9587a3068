package io.turnstream.gateway.view;

import io.turnstream.gateway.http.EventStream;
import io.turnstream.gateway.turn.TurnPhase;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.model.ItemAppend;
import io.turnstream.model.ToolState;
import io.turnstream.model.Topics;
import io.turnstream.model.UIStatus;
import io.turnstream.model.UiPayloadType;
import io.turnstream.model.UpsertEnvelope;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.Settings;
import io.turnstream.runtime.TopicReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * What the gateway serves to user interfaces about turns, from Kafka: one shared {@code read_committed}
 * reader of {@code llm.upserts} and {@code llm.item-appends} fanned out per turn (with a bounded replay
 * buffer per turn for {@code Last-Event-ID} resumes), a materialised view of the compacted
 * {@code llm.item-state} for clients that join late and for snapshots, and the latest turn of each
 * thread. Every gateway instance reads all of it, so any instance serves any turn. No Kafka consumer
 * per HTTP client.
 */
public final class TurnViews implements AutoCloseable {

    private final TurnViewConfig config;
    private final String upsertsTopic;
    private final String appendsTopic;
    private final WireFormat format;
    /** turn id -> channel; the least recently used channel without clients is evicted past the bound. */
    private final Map<String, TurnChannel> channels;
    private final ItemStateView state;
    private final ThreadTurns threads;
    /** Callers waiting for a turn's end, by turn id. */
    private final Map<String, List<CompletableFuture<TurnSnapshot>>> endWaiters = new ConcurrentHashMap<>();
    /** Answers to turns' ends and SSE catch-ups waiting for the item-state view to hold the items they need. */
    private final ItemStateWaits stateWaits;
    private final AtomicInteger senderThreads = new AtomicInteger();
    private final ExecutorService sender;
    private final Runnable streamFellBehind;
    private final ScheduledExecutorService heartbeats;
    private TopicReader feed;

    private TurnViews(Settings settings, WireFormat format, Runnable streamFellBehind) {
        this.config = TurnViewConfig.from(settings);
        this.streamFellBehind = streamFellBehind;
        Topics topics = settings.topics();
        this.upsertsTopic = topics.upserts();
        this.appendsTopic = topics.itemAppends();
        this.threads = new ThreadTurns(config.maxStateTurns());
        this.format = format;
        this.channels = new LinkedHashMap<>(256, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, TurnChannel> eldest) {
                return size() > config.maxBufferedTurns() && eldest.getValue().idle();
            }
        };
        // a few shared threads: they only encode, and no write blocks them (see SseSubscriber)
        this.sender = Executors.newFixedThreadPool(Math.max(2, Runtime.getRuntime().availableProcessors()),
                daemon("turnstream-sse-sender-"));
        this.heartbeats = Executors.newSingleThreadScheduledExecutor(daemon("turnstream-sse-heartbeat-"));
        this.stateWaits = new ItemStateWaits(heartbeats, ItemStateWaits.HELD_WAIT);
        this.state = new ItemStateView(settings.kafkaProperties(), topics.itemState(), format, config.maxStateTurns(),
                threads::record, stateWaits::stateRead);
    }

    /**
     * Starts reading {@code llm.upserts} and {@code llm.item-appends} from their end and
     * {@code llm.item-state} from its beginning.
     *
     * @param format the topics' wire format (as the topology writes them)
     * @param streamFellBehind runs whenever an SSE client is closed for falling too far behind (a metric)
     */
    public static TurnViews start(Settings settings, WireFormat format, Runnable streamFellBehind) {
        TurnViews views = new TurnViews(settings, format, streamFellBehind);
        try {
            views.feed = new TopicReader("turnstream-gateway-live", settings.kafkaProperties(),
                    List.of(views.upsertsTopic, views.appendsTopic), TopicReader.Start.END, views::publish);
        } catch (RuntimeException e) {
            views.close();
            throw e;
        }
        long every = views.config.heartbeat().toMillis();
        views.heartbeats.scheduleAtFixedRate(views::heartbeat, every, every, TimeUnit.MILLISECONDS);
        return views;
    }

    /** Completes when the item-state view holds what the topic held at start-up. */
    public CompletableFuture<Void> loaded() {
        return state.loaded();
    }

    private void publish(ConsumerRecord<String, byte[]> record) {
        LiveEvent event;
        String turnId;
        try {
            if (record.topic().equals(appendsTopic)) {
                ItemAppend append = format.read(record.topic(), record.value(), ItemAppend.class);
                turnId = append.turnId() != null ? append.turnId() : record.key();
                if (append.itemId() == null || append.text() == null) {
                    throw new IllegalArgumentException("an append needs an item id and a text");
                }
                event = new LiveEvent.Append(append);
            } else {
                UpsertEnvelope envelope = format.read(record.topic(), record.value(), UpsertEnvelope.class);
                turnId = envelope.turnId() != null ? envelope.turnId() : record.key();
                if (envelope.payload() == null) {
                    throw new IllegalArgumentException("an upsert needs a payload");
                }
                threads.record(envelope);
                event = new LiveEvent.Upsert(envelope);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (turnId == null) {
            throw new IllegalArgumentException("a live event needs a turn id");
        }
        channel(turnId).publish(event);
        if (event.isTerminal() && endWaiters.containsKey(turnId)) {
            answerEnded(turnId);
        }
    }

    /**
     * Answers the callers waiting for the turn's end (its end is read) with its snapshot once the views hold every item
     * of it ({@link #heldInViews}), through {@link ItemStateWaits}.
     */
    private void answerEnded(String turnId) {
        stateWaits.run(turnId, "answering its end", anyway -> {
            if (!anyway && !heldInViews(turnId)) {
                return false;
            }
            List<CompletableFuture<TurnSnapshot>> waiting = endWaiters.remove(turnId);
            if (waiting != null) {
                TurnSnapshot ended = snapshot(turnId, null).orElseThrow();
                waiting.forEach(waiter -> waiter.complete(ended));
            }
            return true;
        });
    }

    /**
     * Whether the item-state view and the replay buffer together hold every item of the turn the live feed read. The
     * two are read apart, and a turn longer than the buffer (appends count) has its first items only in that view,
     * which may lag the feed: an answer built at the end without them would leave them out. True when the feed has no
     * channel of the turn (nothing to compare with).
     */
    private boolean heldInViews(String turnId) {
        return existingChannel(turnId).map(channel -> channel.heldWith(state.entries(turnId), 0)).orElse(true);
    }

    /**
     * The turn's snapshot once its terminal event is read (at once when it already was), for callers
     * that answer with the whole turn rather than a stream of it. A turn whose first items left the replay
     * buffer is answered once the item-state view holds them too (up to {@link ItemStateWaits#HELD_WAIT}).
     */
    public CompletableFuture<TurnSnapshot> ended(String turnId) {
        CompletableFuture<TurnSnapshot> waiter = new CompletableFuture<>();
        endWaiters.computeIfAbsent(turnId, id -> new CopyOnWriteArrayList<>()).add(waiter);
        // a caller that stops waiting (it cancels the future, or times it out) lets it go
        waiter.whenComplete((snapshot, stopped) -> {
            if (stopped != null) {
                stopWaiting(turnId, waiter);
            }
        });
        // registered first, checked second: an end read in between is answered by publish()
        snapshot(turnId, null).filter(snapshot -> snapshot.turn() != null
                && snapshot.turn().type() != UiPayloadType.TURN_STARTED).ifPresent(snapshot -> answerEnded(turnId));
        return waiter;
    }

    private void stopWaiting(String turnId, CompletableFuture<TurnSnapshot> waiter) {
        endWaiters.computeIfPresent(turnId, (id, list) -> {
            list.remove(waiter);
            return list.isEmpty() ? null : list;
        });
    }

    private TurnChannel channel(String turnId) {
        synchronized (channels) {
            return channels.computeIfAbsent(turnId, id -> new TurnChannel(config.replayBuffer()));
        }
    }

    private Optional<TurnChannel> existingChannel(String turnId) {
        synchronized (channels) {
            return Optional.ofNullable(channels.get(turnId));
        }
    }

    /**
     * Streams a turn's live events to an SSE client: everything after {@code from}
     * ({@link StreamPosition#START} for a new client), then live until the turn's terminal event. A client caught up
     * from the item-state view (what it lacks left the replay buffer) is caught up once that view holds the items that
     * left the buffer ({@link ItemStateWaits}); its stream opens at once, and live events read meanwhile follow its
     * catch-up (see {@link TurnChannel#subscribe}).
     *
     * @param encoder what the client makes of each event
     */
    public void subscribe(String turnId, StreamPosition from, EventStream client, LiveEncoder encoder) {
        SseSubscriber subscriber = new SseSubscriber(client, encoder, sender, config.maxQueuedPerClient(),
                streamFellBehind);
        subscriber.open();
        TurnChannel channel = channel(turnId);
        stateWaits.run(turnId, "catching up an SSE client",
                anyway -> channel.subscribe(subscriber, from, state.entries(turnId), anyway));
    }

    /** The turn events API's stream: upserts and appends as they are, each with its {@link StreamPosition}. */
    void subscribe(String turnId, StreamPosition from, EventStream client) {
        subscribe(turnId, from, client, new TurnEventsEncoder());
    }

    /**
     * How far the live feed has read a turn ({@link StreamPosition#START} before any of it). The item-state view is a
     * reader of its own, which may be ahead: a test that means a client to be caught up from the replay buffer waits
     * for this.
     */
    StreamPosition liveSeen(String turnId) {
        return existingChannel(turnId).map(TurnChannel::seen).orElse(StreamPosition.START);
    }

    /**
     * The seqs of what the item-state view holds of a turn (the latest upsert of each item and of its lifecycle),
     * ascending. It reads on its own and may lag the live feed: a test that means a client to be caught up from it
     * waits for this.
     */
    List<Long> stateHeld(String turnId) {
        return state.entries(turnId).stream().map(UpsertEnvelope::seq).sorted().toList();
    }

    /**
     * What the views hold open for a turn's clients: its SSE streams not let go yet (a stream waiting for its catch-up
     * too) and the callers waiting for its end. None outlives the turn's end or its client (TurnSubscriptionsTest).
     */
    int openSubscriptions(String turnId) {
        List<CompletableFuture<TurnSnapshot>> waiting = endWaiters.get(turnId);
        return existingChannel(turnId).map(TurnChannel::subscribers).orElse(0) + (waiting == null ? 0 : waiting.size());
    }

    /**
     * The latest turn of a thread that is still running, as Kafka tells it; empty when there is none.
     *
     * @param tenantId the caller's tenant: another tenant's turn is none; null when the gateway has no keys
     */
    public Optional<String> runningTurnOf(String threadId, String tenantId) {
        return threads.latest(tenantId, threadId).filter(turnId -> snapshot(turnId, null)
                .filter(snapshot -> tenantId == null
                        || (snapshot.turn() != null && tenantId.equals(snapshot.turn().tenantId())))
                .map(snapshot -> snapshot.status() == TurnPhase.RUNNING).orElse(false));
    }

    /**
     * A thread's turns, earliest first, each as its snapshot (status and items, from {@code llm.item-state}
     * and the live feed); empty when the tenant has no such thread. Turns whose state was forgotten
     * (past {@code max-state-turns}) are left out.
     *
     * @param tenantId the caller's tenant; null when the gateway has no keys
     */
    public List<TurnSnapshot> threadTurns(String tenantId, String threadId) {
        return threads.turns(tenantId, threadId).stream().map(turnId -> snapshot(turnId, null))
                .flatMap(Optional::stream).toList();
    }

    /**
     * When the thread's earliest turn still known began (epoch ms, as its first upsert is stamped); empty when the
     * tenant has no such thread.
     */
    public Optional<Long> threadSince(String tenantId, String threadId) {
        return threads.since(tenantId, threadId);
    }

    /** The turn's current state, or empty when neither this gateway nor Kafka knows it. */
    public Optional<TurnSnapshot> snapshot(String turnId, TurnStatus runningHere) {
        List<UpsertEnvelope> current = TurnSnapshots.latestPerItem(TurnSnapshots.concat(state.entries(turnId),
                existingChannel(turnId).map(TurnChannel::bufferedUpserts).orElse(List.of())), 0);
        if (current.isEmpty() && runningHere == null) {
            return Optional.empty();
        }
        return Optional.of(TurnSnapshot.of(turnId, runningHere, current));
    }

    /**
     * The call's latest tool status on {@code llm.item-state} when it is {@code awaiting_approval} (it names
     * the tool). The topic is compacted and read from its beginning, so this also knows the asks made before
     * this gateway started (which it never read on {@code llm.control}).
     */
    public Optional<UIStatus> awaitingApproval(String turnId, String callId) {
        return state.entries(turnId).stream().map(UpsertEnvelope::payload)
                .filter(payload -> payload instanceof UIStatus status && status.type() == UiPayloadType.TOOL_STATUS
                        && callId.equals(status.callId()) && ToolState.AWAITING_APPROVAL.wire().equals(status.status()))
                .map(UIStatus.class::cast).findFirst();
    }

    /** True while both readers (upserts and item state) read and are connected. */
    public boolean healthy() {
        return feed != null && feed.healthy() && state.healthy();
    }

    private void heartbeat() {
        List<TurnChannel> all;
        synchronized (channels) {
            all = List.copyOf(channels.values());
        }
        all.forEach(TurnChannel::heartbeat);
    }

    private java.util.concurrent.ThreadFactory daemon(String prefix) {
        return r -> {
            Thread thread = new Thread(r, prefix + senderThreads.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }

    @Override
    public void close() {
        heartbeats.shutdownNow();
        if (feed != null) {
            feed.close();
        }
        state.close();
        sender.shutdownNow();
    }
}
