package io.turnstream.gateway.view;

import io.javalin.http.sse.SseClient;
import io.turnstream.gateway.TurnStatus;
import io.turnstream.model.Topics;
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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * What the gateway serves to user interfaces about turns, from Kafka: one shared {@code read_committed}
 * reader of {@code llm.upserts} fanned out per turn (with a bounded replay buffer per turn for
 * {@code Last-Event-ID} resumes), and a materialised view of the compacted {@code llm.item-state} for
 * clients that join late and for snapshots. No Kafka consumer per HTTP client.
 */
public final class TurnViews implements AutoCloseable {

    private final TurnViewConfig config;
    private final String upsertsTopic;
    private final WireFormat format;
    /** turn id -> channel; the least recently used channel without clients is evicted past the bound. */
    private final Map<String, TurnChannel> channels;
    private final ItemStateView state;
    private final AtomicInteger senderThreads = new AtomicInteger();
    private final ExecutorService sender;
    private final ScheduledExecutorService heartbeats;
    private TopicReader feed;

    private TurnViews(Settings settings, WireFormat format) {
        this.config = TurnViewConfig.from(settings);
        Topics topics = settings.topics();
        this.upsertsTopic = topics.upserts();
        this.format = format;
        this.channels = new LinkedHashMap<>(256, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, TurnChannel> eldest) {
                return size() > config.maxBufferedTurns() && eldest.getValue().idle();
            }
        };
        this.sender = Executors.newFixedThreadPool(4, daemon("turnstream-sse-sender-"));
        this.heartbeats = Executors.newSingleThreadScheduledExecutor(daemon("turnstream-sse-heartbeat-"));
        this.state = new ItemStateView(settings.kafkaProperties(), topics.itemState(), format, config.maxStateTurns());
    }

    /**
     * Starts reading {@code llm.upserts} from its end and {@code llm.item-state} from its beginning.
     *
     * @param format the topics' wire format (as the topology writes them)
     */
    public static TurnViews start(Settings settings, WireFormat format) {
        TurnViews views = new TurnViews(settings, format);
        try {
            views.feed = new TopicReader("turnstream-gateway-upserts", settings.kafkaProperties(),
                    List.of(views.upsertsTopic), TopicReader.Start.END, views::publish);
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
        UpsertEnvelope envelope;
        try {
            envelope = format.read(record.topic(), record.value(), UpsertEnvelope.class);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        String turnId = envelope.turnId() != null ? envelope.turnId() : record.key();
        if (turnId == null || envelope.payload() == null) {
            throw new IllegalArgumentException("an upsert needs a turn id and a payload");
        }
        channel(turnId).publish(envelope);
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
     * Streams a turn's upserts to an SSE client: everything after {@code afterSeq} (0 for a new client),
     * then live until the turn's terminal event.
     */
    public void subscribe(String turnId, long afterSeq, SseClient client) {
        SseSubscriber subscriber = new SseSubscriber(client, sender, config.maxQueuedPerClient());
        channel(turnId).subscribe(subscriber, afterSeq, state.entries(turnId));
    }

    /** The turn's current state, or empty when neither this gateway nor Kafka knows it. */
    public Optional<TurnSnapshot> snapshot(String turnId, TurnStatus runningHere) {
        List<UpsertEnvelope> current = TurnSnapshots.latestPerItem(TurnSnapshots.concat(state.entries(turnId),
                existingChannel(turnId).map(TurnChannel::buffered).orElse(List.of())), 0);
        if (current.isEmpty() && runningHere == null) {
            return Optional.empty();
        }
        return Optional.of(TurnSnapshot.of(turnId, runningHere, current));
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
