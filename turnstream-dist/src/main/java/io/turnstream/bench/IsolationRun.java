package io.turnstream.bench;

import io.turnstream.bench.BenchResults.IsolationPair;
import io.turnstream.gateway.Gateway;
import io.turnstream.gateway.ProviderEndpoints;
import io.turnstream.gateway.security.SecurityConfig;
import io.turnstream.model.ChangeType;
import io.turnstream.model.Json;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.Topics;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UiItemType;
import io.turnstream.model.UiPayload;
import io.turnstream.model.UiPayloadType;
import io.turnstream.model.UpsertEnvelope;
import io.turnstream.runtime.Settings;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.HdrHistogram.Histogram;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The isolation phase (issue 21): a gateway with API keys on the run's broker, and tenant B's latencies
 * as its users see them: {@code POST /v1/turns} until the 202, and SSE delivery from the write of an
 * upsert to {@code llm.upserts} until B's stream has it. Measured on the idle gateway, then while tenant A
 * holds {@value #UNKNOWN_TURN_REQUESTS} requests for turns no one knows open and {@value #STALLED_CLIENTS}
 * SSE clients that stop reading a turn that keeps streaming; idle and loaded alternately, pair after pair.
 * The turns' records are written as the topology writes them, so the phase needs no topology.
 */
final class IsolationRun {

    static final int UNKNOWN_TURN_REQUESTS = 300;
    static final int STALLED_CLIENTS = 20;
    /** Turns started and upserts delivered per side of a pair. */
    private static final int SAMPLES = 200;
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final Pattern SAMPLE_ITEM = Pattern.compile("\"itemId\":\"sample-(\\d+)\"");
    private static final String KEY_A = "bench-key-of-tenant-a-" + UUID.randomUUID();
    private static final String KEY_B = "bench-key-of-tenant-b-" + UUID.randomUUID();

    private final BenchCluster cluster;
    private final BenchConfig config;
    private final Settle settle;
    private final PrintWriter progress;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(WAIT).build();

    IsolationRun(BenchCluster cluster, BenchConfig config, Settle settle, PrintWriter progress) {
        this.cluster = cluster;
        this.config = config;
        this.settle = settle;
        this.progress = progress;
    }

    List<IsolationPair> run() throws Exception {
        Topics topics = cluster.createTopics("isolation");
        Path keys = Files.createTempFile("turnstream-bench-keys", ".txt");
        Files.writeString(keys, "tenant-a:" + KEY_A + "\ntenant-b:" + KEY_B + "\n");
        List<IsolationPair> pairs = new ArrayList<>();
        try (Gateway gateway = Gateway.start(settings(topics, keys), ProviderEndpoints.simulatedOnly(null), List.of());
             Producer<String, String> producer = new KafkaProducer<>(cluster.clientProperties(), new StringSerializer(),
                     new StringSerializer())) {
            gateway.views().loaded().get(WAIT.toSeconds(), TimeUnit.SECONDS);
            TopicWriter writer = new TopicWriter(producer, topics);
            // warm-up, not measured: the first pair's idle side would otherwise pay for JIT and first connections
            measure(gateway, writer);
            progress.println("isolation warm-up done");
            for (int pair = 1; pair <= config.pairs(); pair++) {
                // B's turns of the side before still stream (the simulated provider, 40 tokens/s): let them end
                settle.before("isolation pair " + pair + ", idle");
                Side idle = measure(gateway, writer);
                Side loaded;
                settle.before("isolation pair " + pair + ", loaded");
                try (Load load = Load.start(gateway, writer)) {
                    loaded = measure(gateway, writer);
                }
                pairs.add(new IsolationPair(idle.turnStart().p99(), idle.delivery().p99(), loaded.turnStart().p99(),
                        loaded.delivery().p99()));
                progress.printf("isolation pair %d/%d: POST /v1/turns p99 %.1f ms idle, %.1f ms loaded; SSE delivery p99"
                                + " %.1f ms idle, %.1f ms loaded%n", pair, config.pairs(), idle.turnStart().p99(),
                        loaded.turnStart().p99(), idle.delivery().p99(), loaded.delivery().p99());
                progress.flush();
            }
        } finally {
            Files.deleteIfExists(keys);
        }
        return pairs;
    }

    private Settings settings(Topics topics, Path keys) {
        Properties props = cluster.clientProperties();
        topics.byRole().forEach((role, name) -> props.setProperty(Topics.PREFIX + role, name));
        props.setProperty(SecurityConfig.API_KEYS_FILE, keys.toString());
        props.setProperty("turnstream.gateway.port", "0");
        // A's unknown turns wait for the whole measurement; B's turns are never refused by a turn limit
        props.setProperty(SecurityConfig.PREFIX + "unknown-turn-grace-ms", String.valueOf(Duration.ofMinutes(30).toMillis()));
        props.setProperty(SecurityConfig.PREFIX + "tenant.max-requests-per-second", "1000000");
        props.setProperty(SecurityConfig.PREFIX + "tenant.max-turns-per-minute", "1000000");
        props.setProperty(SecurityConfig.PREFIX + "tenant.max-concurrent-turns", "100000");
        props.setProperty(SecurityConfig.PREFIX + "max-concurrent-turns", "100000");
        return Settings.of(props);
    }

    private record Side(Percentiles turnStart, Percentiles delivery) {
    }

    /** Tenant B: {@link #SAMPLES} turns started one after the other, then as many upserts streamed to it one by one. */
    private Side measure(Gateway gateway, TopicWriter writer) throws Exception {
        Histogram starts = new Histogram(3);
        for (int i = 0; i < SAMPLES; i++) {
            long sent = System.nanoTime();
            HttpResponse<String> accepted = http.send(HttpRequest.newBuilder(URI.create(gateway.baseUrl() + "/v1/turns"))
                    .header("Authorization", "Bearer " + KEY_B).header("Content-Type", "application/json")
                    .timeout(WAIT).POST(HttpRequest.BodyPublishers.ofString("{\"prompt\": \"hello\"}")).build(),
                    HttpResponse.BodyHandlers.ofString());
            if (accepted.statusCode() != 202) {
                throw new IllegalStateException("POST /v1/turns answered " + accepted.statusCode() + ": " + accepted.body());
            }
            starts.recordValue(System.nanoTime() - sent);
        }
        return new Side(Percentiles.of(starts), Percentiles.of(deliveries(gateway, writer)));
    }

    private Histogram deliveries(Gateway gateway, TopicWriter writer) throws Exception {
        TopicWriter.Turn turn = writer.newTurn("tenant-b");
        turn.started();
        Map<Integer, CompletableFuture<Long>> received = new ConcurrentHashMap<>();
        HttpResponse<InputStream> stream = http.send(HttpRequest.newBuilder(
                URI.create(gateway.baseUrl() + "/v1/turns/" + turn.id + "/events")).header("Authorization", "Bearer " + KEY_B)
                .build(), HttpResponse.BodyHandlers.ofInputStream());
        if (stream.statusCode() != 200) {
            throw new IllegalStateException("GET /v1/turns/" + turn.id + "/events answered " + stream.statusCode() + ": "
                    + new String(stream.body().readAllBytes(), StandardCharsets.UTF_8));
        }
        Thread reader = new Thread(() -> readSamples(stream.body(), received), "bench-isolation-sse-reader");
        reader.setDaemon(true);
        reader.start();
        Histogram deliveries = new Histogram(3);
        for (int i = 0; i < SAMPLES; i++) {
            CompletableFuture<Long> arrival = received.computeIfAbsent(i, n -> new CompletableFuture<>());
            long sent = System.nanoTime();
            turn.message("sample-" + i, "sample " + i);
            deliveries.recordValue(arrival.get(WAIT.toSeconds(), TimeUnit.SECONDS) - sent);
        }
        turn.completed();
        reader.join(WAIT.toMillis());
        stream.body().close();
        return deliveries;
    }

    private static void readSamples(InputStream body, Map<Integer, CompletableFuture<Long>> received) {
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(body, StandardCharsets.UTF_8))) {
            for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                Matcher sample = SAMPLE_ITEM.matcher(line);
                if (sample.find()) {
                    long now = System.nanoTime();
                    received.computeIfAbsent(Integer.parseInt(sample.group(1)), n -> new CompletableFuture<>()).complete(now);
                }
            }
        } catch (IOException closed) {
            // the stream ended with the turn, or the run closed it
        }
    }

    /**
     * Tenant A's load: requests for turns no one knows (each waits for its turn to appear) and SSE clients
     * that stop reading a turn that streams 4 KB upserts, each a raw socket that sends its request and
     * never reads (the smallest receive buffer the kernel allows).
     */
    private static final class Load implements AutoCloseable {

        private final List<Socket> sockets = new ArrayList<>();
        private final Thread feeder;
        private volatile boolean running = true;

        private Load(TopicWriter.Turn streaming) {
            this.feeder = new Thread(() -> {
                String block = "y".repeat(4096);
                try {
                    // an ordinary stream, 20 upserts a second: the load is A's clients, not A's traffic
                    for (int i = 0; running; i++) {
                        streaming.message("load-" + i, block);
                        Thread.sleep(50);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                streaming.completed();
            }, "bench-isolation-load");
            feeder.setDaemon(true);
        }

        static Load start(Gateway gateway, TopicWriter writer) throws IOException {
            TopicWriter.Turn streaming = writer.newTurn("tenant-a");
            streaming.started();
            Load load = new Load(streaming);
            try {
                for (int i = 0; i < UNKNOWN_TURN_REQUESTS; i++) {
                    load.request(gateway.port(), "/v1/turns/turn-unknown-" + UUID.randomUUID());
                }
                for (int i = 0; i < STALLED_CLIENTS; i++) {
                    load.request(gateway.port(), "/v1/turns/" + streaming.id + "/events");
                }
            } catch (IOException | RuntimeException e) {
                load.close();
                throw e;
            }
            load.feeder.start();
            return load;
        }

        private void request(int port, String path) throws IOException {
            Socket socket = new Socket();
            sockets.add(socket);
            socket.setReceiveBufferSize(1024);
            socket.connect(new InetSocketAddress("127.0.0.1", port));
            socket.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + port
                    + "\r\nAuthorization: Bearer " + KEY_A + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
        }

        @Override
        public void close() throws IOException {
            running = false;
            try {
                feeder.join(WAIT.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            for (Socket socket : sockets) {
                socket.close();
            }
        }
    }

    /** Writes a turn's records as the topology does: upserts to {@code llm.upserts} and {@code llm.item-state}. */
    private record TopicWriter(Producer<String, String> producer, Topics topics) {

        Turn newTurn(String tenantId) {
            return new Turn(this, "turn-" + UUID.randomUUID(), "thread-" + UUID.randomUUID(), tenantId);
        }

        private static final class Turn {
            final String id;
            private final TopicWriter writer;
            private final String threadId;
            private final String tenantId;
            private long seq;

            Turn(TopicWriter writer, String id, String threadId, String tenantId) {
                this.writer = writer;
                this.id = id;
                this.threadId = threadId;
                this.tenantId = tenantId;
            }

            void started() {
                publish(new UITurnEvent(UiPayloadType.TURN_STARTED, id, threadId, "model", "simulated", null, null, null,
                        tenantId), "turn");
            }

            void message(String itemId, String content) {
                publish(UIUpsert.text(id, threadId, itemId, UiItemType.MESSAGE, ChangeType.COMPLETED, 1, content, "agent",
                        null), itemId);
            }

            void completed() {
                publish(new UITurnEvent(UiPayloadType.TURN_COMPLETED, id, threadId, "model", "simulated",
                        ResponseStatus.COMPLETE, new UITurnEvent.Usage(1, 1, 2), null, tenantId, "stop"), "turn");
            }

            private void publish(UiPayload payload, String stateKey) {
                seq++;
                String json = Json.toString(new UpsertEnvelope(UUID.randomUUID().toString(), System.currentTimeMillis(), id,
                        seq, payload.payloadType(), payload));
                try {
                    writer.producer.send(new ProducerRecord<>(writer.topics.upserts(), id, json)).get();
                    writer.producer.send(new ProducerRecord<>(writer.topics.itemState(), id + "/" + stateKey, json)).get();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while writing a turn's records", e);
                } catch (java.util.concurrent.ExecutionException e) {
                    throw new UncheckedIOException(new IOException("cannot write a turn's records", e.getCause()));
                }
            }
        }
    }
}
