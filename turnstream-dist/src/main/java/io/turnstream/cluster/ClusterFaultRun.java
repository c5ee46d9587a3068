package io.turnstream.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.model.Json;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.Topics;
import io.turnstream.model.UiPayloadType;
import io.turnstream.model.UpsertEnvelope;
import io.turnstream.runtime.FreePorts;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.Writer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * The deployment shape on a real three-node cluster, every piece a process: 3 brokers, 2 topology
 * instances, 2 tool executors, 2 gateways (the simulated provider, whose turns list the workspace and
 * read a file: two tool calls each). The turns start at once; while they stream, one topology
 * instance, one executor, one gateway and one broker are SIGKILLed in turn (the broker then restarted),
 * each after the turns have streamed again since the previous one. Returns what a {@code read_committed}
 * reader saw on each topic and each fault's takeover: from the SIGKILL to every turn then in flight
 * showing an upsert written after it (and, measured beside it: an upsert or a live text append, every
 * topology task's partition, a raw event; see {@link Fault}). {@code ClusterFaultsTest} checks the records'
 * invariants; {@code turnstream bench --cluster 3} reports the figures.
 */
public final class ClusterFaultRun {

    /**
     * @param turns turns started at once
     * @param minInFlight before a fault, fewer turns than this in flight get this many more, so each fault hits
     *     turns mid-stream
     * @param tokensPerSecond the simulated provider's rate: slow enough that the turns stream through the faults
     * @param bound every wait is for a state, bounded by this
     * @param classpath holds the {@code turnstream} CLI the nodes and services run
     * @param logDir where each service's output goes ({@code NAME.log}), kept for a post-mortem
     * @param config properties added to every service's configuration file (e.g. a topology setting to compare
     *     runs with: {@code producer.retry.backoff.ms}); empty for the shipped defaults
     */
    public record Settings(int turns, int minInFlight, int tokensPerSecond, Duration bound, String classpath,
                           Path logDir, Properties config) {

        public Settings {
            config = (Properties) config.clone();
        }
    }

    /**
     * One fault and its takeover, each figure from the SIGKILL to what a {@code read_committed} reader read
     * written after it, for the last turn (or partition) and the median one.
     *
     * @param killedAt the wall-clock time of the SIGKILL (ISO-8601, UTC), to find it in the services' logs
     * @param upsertsAgainSeconds every turn in flight shows an upsert ({@code slowestTurn} the last), and
     *     {@code upsertsAgainMedianSeconds} the median turn (a backlog shows as a long tail). An upsert
     *     comes when an item's content has grown by a step of the gradient, so a turn that streams can go
     *     seconds without one, and a turn waiting for a tool has none until its result is in.
     * @param outputAgainSeconds every turn in flight shows an upsert or a live text append
     *     ({@code llm.item-appends}, every 100 ms tick while its text grows), whichever comes first
     * @param partitionsAgainSeconds every partition of {@code llm.raw-events} (a topology task) with a turn
     *     in flight shows output written after the SIGKILL for one of its turns: the last of the
     *     {@code partitions}, and {@code partitionsAgainMedianSeconds} the median one. The dead topology
     *     instance's tasks are the last: the survivor's never stopped. {@code partitionsAgain}: each partition's.
     * @param rawAgainSeconds every run in flight shows a raw event (the gateways' writes)
     */
    public record Fault(String what, String killedAt, double atSeconds, int inFlight, int streaming,
                        double upsertsAgainSeconds, double upsertsAgainMedianSeconds, String slowestTurn,
                        double outputAgainSeconds, double outputAgainMedianSeconds, double partitionsAgainSeconds,
                        double partitionsAgainMedianSeconds, int partitions, Map<Integer, Double> partitionsAgain,
                        double rawAgainSeconds, int rawResolved, int rawRuns) {

        public String describe() {
            return String.format(Locale.ROOT, "%s SIGKILLed at %s with %d turns in flight (%d streaming): "
                    + "upserts again after %.1f s (median turn %.1f s; the last %s), upserts or appends after %.1f s "
                    + "(median turn %.1f s), every one of %d partitions of the raw events after %.1f s (median "
                    + "partition %.1f s), raw events after %.1f s (%d of %d runs)", what, killedAt, inFlight, streaming,
                    upsertsAgainSeconds, upsertsAgainMedianSeconds, slowestTurn, outputAgainSeconds,
                    outputAgainMedianSeconds, partitions, partitionsAgainSeconds, partitionsAgainMedianSeconds,
                    rawAgainSeconds, rawResolved, rawRuns);
        }
    }

    /**
     * What the run saw.
     *
     * @param turns every turn started; {@code runs} the run id of each
     * @param upserts, raw, appends, results everything a read_committed reader read of each topic by the end
     * @param upsertSightings per turn, when each of its upserts was written and read
     * @param startedAtNanos {@link System#nanoTime()} when the run began: the sightings' read times and the
     *     faults' {@code atSeconds} count from it
     */
    public record Report(List<String> turns, Map<String, String> runs, List<Fault> faults, double startupSeconds,
                         double seconds, long startedAtNanos, List<ConsumerRecord<String, String>> upserts,
                         List<ConsumerRecord<String, String>> raw, List<ConsumerRecord<String, String>> appends,
                         List<ConsumerRecord<String, String>> results,
                         Map<String, List<TopicFollower.Sighting>> upsertSightings) {
    }

    private static final String PROMPT = "What is in this workspace?";
    /** How long the gateways' writes are watched after a fault, for the figure only. */
    private static final Duration SOURCE_BOUND = Duration.ofSeconds(60);
    /** The gateway's turn consumer (its client id) and how many partitions it owns, on {@code /metrics/prometheus}. */
    private static final String TURN_CONSUMER = "turnstream-gateway-turns";
    private static final String TURN_PARTITIONS_METRIC = "kafka_consumer_coordinator_assigned_partitions";
    /** Partitions of each contract topic on the run's own cluster. */
    public static final int PARTITIONS = 6;

    private final Settings settings;
    private final Path dir;
    private final PrintWriter progress;
    private final HttpClient http = HttpClient.newHttpClient();
    private final List<ServiceProcess> services = new ArrayList<>();
    private final Map<String, Integer> apiPorts = new ConcurrentHashMap<>();
    private final Map<String, String> runs = new ConcurrentHashMap<>();

    public ClusterFaultRun(Settings settings, Path dir, PrintWriter progress) {
        this.settings = settings;
        this.dir = dir;
        this.progress = progress;
    }

    /**
     * On a fresh cluster of its own, of {@code nodes} brokers, which it stops at the end: nothing of an earlier
     * run (groups, transactional ids, leaders moved by the broker's SIGKILL) reaches this one.
     */
    public Report run(int nodes) throws Exception {
        Path kafkaDir = dir.resolve("kafka");
        try (LocalCluster kafka = LocalCluster.start(kafkaDir, nodes, PARTITIONS, settings.classpath())) {
            return run(kafka);
        } finally {
            // beside the services' logs, for a post-mortem: the cluster's own directory is the caller's to delete
            LocalCluster.copyLogs(kafkaDir, settings.logDir());
        }
    }

    /** On {@code kafka}, whose contract topics exist and whose node 2 it kills and restarts. */
    public Report run(LocalCluster kafka) throws Exception {
        long began = System.nanoTime();
        Path workspace = Files.createDirectories(dir.resolve("workspace"));
        Files.writeString(workspace.resolve("README.md"), "# Launch notes\nThe launch is on Tuesday; the demo runs at ten.\n");
        Files.writeString(workspace.resolve("plan.md"), "- dry run on Monday\n- launch on Tuesday\n");
        String servers = kafka.bootstrapServers();
        Path common = dir.resolve("common.properties");
        try (Writer writer = Files.newBufferedWriter(common)) {
            serviceConfig(settings).store(writer, "every service of the fault run");
        }
        say("the services' logs: %s", settings.logDir().toAbsolutePath());
        try {
            ServiceProcess topologyA = topology("topology-a", servers, common);
            topology("topology-b", servers, common);
            ServiceProcess executorA = executor("executor-a", servers, common, workspace);
            executor("executor-b", servers, common, workspace);
            ServiceProcess gatewayA = gateway("gateway-a", servers, common);
            ServiceProcess gatewayB = gateway("gateway-b", servers, common);
            for (ServiceProcess service : services) {
                service.awaitHealthy(settings.bound());
            }
            double startup = secondsSince(began);
            say("%d brokers and %d services ready after %.0f s", kafka.size(), services.size(), startup);
            return faults(kafka, List.of(topologyA, executorA), List.of(gatewayA, gatewayB), startup, began);
        } finally {
            for (ServiceProcess service : services) {
                service.close();
            }
        }
    }

    /** What every service of the run reads: the run's own settings, then {@link Settings#config()} over them. */
    static Properties serviceConfig(Settings settings) {
        int turns = settings.turns();
        Properties config = new Properties();
        // the services start together on a small machine: the first answer from the cluster may take a while
        config.setProperty("turnstream.connect.timeout.ms", "120000");
        config.setProperty("turnstream.simulated.tokens-per-second", String.valueOf(settings.tokensPerSecond()));
        config.setProperty("turnstream.gateway.tenant.max-concurrent-turns", String.valueOf(2 * turns));
        config.setProperty("turnstream.gateway.tenant.max-turns-per-minute", String.valueOf(10 * turns));
        config.setProperty("turnstream.gateway.tenant.max-requests-per-second", String.valueOf(10 * turns));
        config.setProperty("turnstream.application.id", "cluster-faults");
        config.putAll(settings.config());
        return config;
    }

    private Report faults(LocalCluster kafka, List<ServiceProcess> victims, List<ServiceProcess> gateways,
                          double startup, long began) throws Exception {
        String servers = kafka.bootstrapServers();
        Duration bound = settings.bound();
        try (TopicFollower upserts = new TopicFollower(servers, Topics.DEFAULTS.upserts(), ClusterFaultRun::endsTurn);
             TopicFollower raw = new TopicFollower(servers, Topics.DEFAULTS.rawEvents(), ClusterFaultRun::endsRun);
             TopicFollower appends = new TopicFollower(servers, Topics.DEFAULTS.itemAppends(), r -> false);
             TopicFollower results = new TopicFollower(servers, Topics.DEFAULTS.toolResults(), r -> false);
             TopicFollower calls = new TopicFollower(servers, Topics.DEFAULTS.toolCalls(), r -> false);
             TopicFollower control = new TopicFollower(servers, Topics.DEFAULTS.control(), r -> false)) {
            List<String> turns = new ArrayList<>(startTurns(gateways, settings.turns()));
            // aim: which process, chosen before the kill's time is taken (a gateway's choice reads /metrics)
            record Injection(String what, Callable<Kill> aim) {
            }
            List<Injection> injections = List.of(
                    new Injection("topology instance", () -> victims.get(0)::kill),
                    new Injection("tool executor", () -> victims.get(1)::kill),
                    new Injection("gateway", () -> busiest(gateways)::kill),
                    new Injection("broker", () -> () -> kafka.kill(2)));
            List<Fault> faults = new ArrayList<>();
            for (Injection injection : injections) {
                if (upserts.inFlight(turns).size() < settings.minInFlight()) {
                    turns.addAll(startTurns(gateways.stream().filter(ServiceProcess::isAlive).toList(),
                            settings.minInFlight()));
                }
                List<String> inFlight = upserts.inFlight(turns);
                Waits.until("half of the " + inFlight.size() + " turns in flight streaming before the "
                                + injection.what() + " is killed", bound, Duration.ofMillis(200),
                        () -> inFlight.stream().filter(upserts::hasStreamed).count(), n -> n >= inFlight.size() / 2,
                        n -> n + " streaming; not yet: " + upserts.describe(
                                inFlight.stream().filter(t -> !upserts.hasStreamed(t)).toList(), 5));
                Kill kill = injection.aim().call();
                List<String> hit = upserts.inFlight(turns);
                List<String> hitRuns = hit.stream().map(runs::get).toList();
                long killedMillis = System.currentTimeMillis();
                long killedNanos = System.nanoTime();
                kill.run();
                // what a UI reads: every turn in flight shows an upsert written after the kill (or had ended)
                TopicFollower.Takeover shown = Waits.until("every one of the " + hit.size()
                                + " turns in flight streaming upserts again after the " + injection.what()
                                + " was killed at " + Instant.ofEpochMilli(killedMillis), bound, Duration.ofMillis(200),
                        () -> upserts.since(killedMillis, killedNanos, hit), t -> t.resolved() == hit.size(),
                        t -> "not yet: " + upserts.describe(t.unresolved(hit), 5));
                // what the topology wrote at all: an upsert or a live text append, per turn and per task
                TopicFollower.Takeover output = shown.earliest(appends.since(killedMillis, killedNanos, hit));
                Map<Integer, Duration> perTask = perPartition(output, raw);
                List<Duration> tasks = perTask.values().stream().sorted().toList();
                // the gateways' own writes, which the upserts of a backlog written after the kill can hide:
                // measured, not required
                TopicFollower.Takeover written;
                try {
                    written = Waits.until("raw events again", SOURCE_BOUND, Duration.ofMillis(200),
                            () -> raw.since(killedMillis, killedNanos, hitRuns), t -> t.resolved() == hitRuns.size());
                } catch (IllegalStateException notAll) {
                    written = raw.since(killedMillis, killedNanos, hitRuns);
                }
                Fault fault = new Fault(injection.what(), Instant.ofEpochMilli(killedMillis).toString(),
                        (killedNanos - began) / 1e9,
                        hit.size(), shown.streamedAgain().size(), seconds(shown.longest()), seconds(shown.median()),
                        shown.slowest(), seconds(output.longest()), seconds(output.median()),
                        seconds(tasks.isEmpty() ? Duration.ZERO : tasks.get(tasks.size() - 1)),
                        seconds(tasks.isEmpty() ? Duration.ZERO : tasks.get(tasks.size() / 2)), tasks.size(),
                        new TreeMap<>(perTask.entrySet().stream().collect(Collectors.toMap(Map.Entry::getKey,
                                e -> seconds(e.getValue())))),
                        seconds(written.longest()), written.resolved(), hitRuns.size());
                faults.add(fault);
                say("%s", fault.describe());
                String slowestRun = written.slowest();
                if (!slowestRun.isEmpty()) {
                    String turn = hit.get(hitRuns.indexOf(slowestRun));
                    say("the run whose raw events came last, %s (%s), from its start:%n  %s", slowestRun,
                            turn, String.join("\n  ", TurnTimeline.of(Map.of(Topics.DEFAULTS.rawEvents(),
                                    raw.seen(slowestRun), Topics.DEFAULTS.toolCalls(), calls.seen(turn),
                                    Topics.DEFAULTS.toolResults(), results.seen(turn), Topics.DEFAULTS.control(),
                                    control.seen(turn)), killedMillis, killedNanos, Double.NEGATIVE_INFINITY,
                                    seconds(written.longest()) + 1)));
                }
            }
            // the broker comes back while the turns finish
            CompletableFuture<Void> restarted = CompletableFuture.runAsync(() -> {
                try {
                    kafka.restart(2);
                } catch (Exception e) {
                    throw new CompletionException(e);
                }
            });
            Waits.until("every one of the " + turns.size() + " turns ended (turn_completed or turn_error read)", bound,
                    Duration.ofSeconds(1), () -> upserts.inFlight(turns), List::isEmpty,
                    left -> left.size() + " not: " + upserts.describe(left, 5));
            List<String> runIds = turns.stream().map(runs::get).toList();
            Waits.until("every run's raw events read to its end (response_done or response_error)", bound,
                    Duration.ofSeconds(1), () -> raw.inFlight(runIds), List::isEmpty,
                    left -> left.size() + " not: " + raw.describe(left, 5));
            try {
                restarted.get(bound.toSeconds(), TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                throw new IllegalStateException("the killed broker (node 2) was not back within " + bound.toSeconds()
                        + " s", e);
            }
            Map<String, List<TopicFollower.Sighting>> sightings = new ConcurrentHashMap<>();
            turns.forEach(turn -> sightings.put(turn, upserts.sightings(turn)));
            Report report = new Report(List.copyOf(turns), Map.copyOf(runs), List.copyOf(faults), startup,
                    secondsSince(began), began, upserts.readToEnd(bound), raw.readToEnd(bound),
                    appends.readToEnd(bound), results.readToEnd(bound), sightings);
            say("%d turns (%d started at once) ended after %.0f s", turns.size(), settings.turns(), report.seconds());
            return report;
        }
    }

    /**
     * Per partition of {@code llm.raw-events} (a topology task: a turn's raw events go to its run id's
     * partition) holding a turn written to again: how soon the first of its turns was.
     */
    private Map<Integer, Duration> perPartition(TopicFollower.Takeover output, TopicFollower raw) {
        Map<Integer, Duration> first = new HashMap<>();
        output.streamedAgain().forEach((turn, after) -> {
            Integer partition = raw.partition(runs.get(turn));
            if (partition != null) {
                first.merge(partition, after, (a, b) -> a.compareTo(b) <= 0 ? a : b);
            }
        });
        return first;
    }

    /**
     * The gateway that owns the most partitions of {@code llm.turn-requests} (its turn consumer's
     * {@code assigned-partitions}): a gateway can own none (the other took them all at start-up and kept
     * them), and killing that one would hit no turn.
     */
    private ServiceProcess busiest(List<ServiceProcess> gateways) throws Exception {
        ServiceProcess busiest = gateways.get(0);
        double most = -1;
        for (ServiceProcess gateway : gateways) {
            double owned = gateway.metric(TURN_PARTITIONS_METRIC, TURN_CONSUMER);
            if (owned > most) {
                busiest = gateway;
                most = owned;
            }
        }
        say("killing %s, which owns %.0f partition(s) of the turn requests", busiest.name(), most);
        return busiest;
    }

    @FunctionalInterface
    private interface Kill {
        void run() throws Exception;
    }

    private ServiceProcess topology(String name, String servers, Path common) throws IOException {
        int health = FreePorts.take();
        return add(ServiceProcess.start(name, settings.classpath(), settings.logDir(), health, List.of("topology",
                "--bootstrap-servers", servers, "--config", common.toString(), "--health-port", String.valueOf(health),
                "--state-dir", dir.resolve("state-" + name).toString())));
    }

    private ServiceProcess executor(String name, String servers, Path common, Path workspace) throws IOException {
        // two executors on one workspace: each its own instance id (static membership, transactional id)
        Path config = Files.writeString(dir.resolve(name + ".properties"),
                Files.readString(common) + "turnstream.tool-executor.instance-id=" + name + "\n");
        int health = FreePorts.take();
        return add(ServiceProcess.start(name, settings.classpath(), settings.logDir(), health, List.of("tool-executor",
                "--bootstrap-servers", servers, "--config", config.toString(), "--health-port", String.valueOf(health),
                "--workspace", workspace.toString())));
    }

    private ServiceProcess gateway(String name, String servers, Path common) throws IOException {
        List<Integer> ports = FreePorts.take(2);
        apiPorts.put(name, ports.get(0));
        return add(ServiceProcess.start(name, settings.classpath(), settings.logDir(), ports.get(1), List.of("gateway",
                "--bootstrap-servers", servers, "--config", common.toString(), "--port", String.valueOf(ports.get(0)),
                "--management-port", String.valueOf(ports.get(1)))));
    }

    private ServiceProcess add(ServiceProcess service) {
        services.add(service);
        return service;
    }

    /**
     * Starts {@code count} turns at once, alternating over {@code gateways} (one after the other, each POST
     * waits for its request to be on three brokers: 200 took a minute on a loaded machine); returns their ids.
     */
    private List<String> startTurns(List<ServiceProcess> gateways, int count) throws Exception {
        List<CompletableFuture<HttpResponse<String>>> posts = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            ServiceProcess gateway = gateways.get(i % gateways.size());
            posts.add(http.sendAsync(HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + apiPorts.get(gateway.name()) + "/v1/turns"))
                    .header("content-type", "application/json").timeout(settings.bound())
                    .POST(HttpRequest.BodyPublishers.ofString(Json.toString(Map.of("prompt", PROMPT)))).build(),
                    HttpResponse.BodyHandlers.ofString()));
        }
        List<String> turns = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            HttpResponse<String> response = posts.get(i).get();
            if (response.statusCode() != 202) {
                throw new IllegalStateException("POST /v1/turns to " + gateways.get(i % gateways.size()).name() + ": "
                        + response.statusCode() + " " + response.body());
            }
            JsonNode started = Json.MAPPER.readTree(response.body());
            turns.add(started.get("turnId").asText());
            runs.put(started.get("turnId").asText(), started.get("runId").asText());
        }
        return turns;
    }

    private static boolean endsTurn(ConsumerRecord<String, String> upsert) {
        UiPayloadType type = Json.fromString(upsert.value(), UpsertEnvelope.class).payload().type();
        return type == UiPayloadType.TURN_COMPLETED || type == UiPayloadType.TURN_ERROR;
    }

    private static boolean endsRun(ConsumerRecord<String, String> rawEvent) {
        String type = Json.fromString(rawEvent.value(), StreamEvent.class).type();
        return StreamPayload.RESPONSE_DONE.equals(type) || StreamPayload.RESPONSE_ERROR.equals(type);
    }

    private void say(String format, Object... args) {
        progress.printf("cluster-faults: " + format + "%n", args);
        progress.flush();
    }

    private static double seconds(Duration duration) {
        return duration.toMillis() / 1000.0;
    }

    private static double secondsSince(long nanoTime) {
        return (System.nanoTime() - nanoTime) / 1e9;
    }
}
