package io.turnstream.gateway;

import io.turnstream.gateway.chat.ChatApi;
import io.turnstream.gateway.provider.ProviderClient;
import io.turnstream.gateway.provider.StallWatchdog;
import io.turnstream.gateway.security.RequestGuard;
import io.turnstream.gateway.security.TenantLimits;
import io.turnstream.gateway.security.TurnOwnership;
import io.turnstream.gateway.provider.ToolDefinition;
import io.turnstream.gateway.view.TurnEventsApi;
import io.turnstream.gateway.view.TurnSnapshot;
import io.turnstream.gateway.view.TurnViews;
import io.turnstream.model.ControlMessage;
import io.turnstream.model.Topics;
import io.turnstream.model.WireFormat;
import io.turnstream.schema.WireFormats;
import io.turnstream.runtime.HealthServer;
import io.turnstream.runtime.ServiceMetrics;
import io.turnstream.runtime.Settings;
import io.turnstream.runtime.TraceContext;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The LLM gateway as a service: the HTTP API, the agent loops of running turns, the producer of
 * {@code llm.raw-events} and the reader of tool results and cancels. Start it with
 * {@link #start(Settings)} (or in-process with explicit provider endpoints) and close it to stop.
 */
public final class Gateway implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(Gateway.class);

    /** What a cancel request found. */
    public enum CancelOutcome {
        /** The turn was running here and is being stopped. */
        CANCELLING,
        /** The turn already finished. */
        FINISHED,
        /** This gateway does not know the turn. */
        UNKNOWN
    }

    /** How long a starting gateway waits to read the published tool definitions. */
    private static final Duration PUBLISHED_TOOLS_WAIT = Duration.ofSeconds(10);

    private final GatewayConfig config;
    private final GatewayMetrics metrics = new GatewayMetrics();
    private final TurnRegistry registry = new TurnRegistry();
    private final StallWatchdog watchdog = new StallWatchdog();
    private final AtomicInteger turnThreads = new AtomicInteger();
    private final ExecutorService turns = Executors.newCachedThreadPool(r -> {
        Thread thread = new Thread(r, "turn-" + turnThreads.incrementAndGet());
        thread.setDaemon(true);
        return thread;
    });
    private final Providers providers;
    private final ProviderClient client;
    private final GatewayProducer producer;
    private final TurnInbox inbox;
    private final ToolCatalog tools;
    private final TurnViews views;
    private final TurnOwnership ownership;
    private final TenantLimits tenantLimits;
    private final GatewayServer server;
    private final HealthServer management;
    private final ServiceMetrics serviceMetrics;
    private final boolean ownsMetrics;

    private Gateway(Settings settings, ProviderEndpoints endpoints, List<GatewayServer.Routes> extraRoutes,
                    ServiceMetrics shared) {
        this.config = GatewayConfig.from(settings);
        config.security().requireSafeToListenOn(config.host());
        this.tenantLimits = TenantLimits.of(config.security());
        this.ownsMetrics = shared == null;
        this.serviceMetrics = shared != null ? shared : ServiceMetrics.create("gateway", settings);
        metrics.bindTo(serviceMetrics.registry());
        Topics topics = settings.topics();
        this.providers = new Providers(endpoints, config);
        this.client = new ProviderClient(ProviderClient.defaultHttpClient(), watchdog, config.stallTimeout());
        WireFormat wire = WireFormats.from(settings);
        this.producer = new GatewayProducer(settings.kafkaProperties(), topics, wire);
        producer.bindTo(serviceMetrics);
        TurnInbox startedInbox = null;
        TurnViews startedViews = null;
        GatewayServer startedServer = null;
        ToolCatalog startedTools = null;
        try {
            startedTools = new ToolCatalog(settings.kafkaProperties(), topics.toolDefinitions(), wire);
            startedInbox = new TurnInbox(settings.kafkaProperties(), topics, wire, registry, metrics);
            startedInbox.bindTo(serviceMetrics);
            startedViews = TurnViews.start(settings, wire);
            this.ownership = new TurnOwnership(ownerInKafka(startedViews), config.security().unknownTurnGrace());
            List<GatewayServer.Routes> routes = new ArrayList<>();
            routes.add(new TurnsApi(this));
            routes.add(new TurnEventsApi(startedViews));
            routes.add(new ChatApi(this));
            routes.addAll(extraRoutes);
            startedServer = GatewayServer.start(config.host(), config.port(),
                    new RequestGuard(config.security(), ownership), routes);
            this.management = HealthServer.start(config.managementHost(), config.managementPort(), this::health,
                    serviceMetrics, Map.of("/metrics", metrics::snapshot));
        } catch (RuntimeException e) {
            if (startedServer != null) {
                startedServer.close();
            }
            if (startedTools != null) {
                startedTools.close();
            }
            if (startedViews != null) {
                startedViews.close();
            }
            if (startedInbox != null) {
                startedInbox.close();
            }
            producer.close();
            watchdog.close();
            closeOwnMetrics();
            throw e;
        }
        this.server = startedServer;
        this.inbox = startedInbox;
        this.views = startedViews;
        this.tools = startedTools;
        awaitPublishedTools();
        LOG.info("gateway listening on {}; default provider {}; {}", server.baseUrl(), providers.defaultProvider(),
                config.security().keys());
    }

    /** Ready while the gateway's Kafka readers and its producer are; it is never dead in a way a restart would fix. */
    private HealthServer.Status health() {
        Map<String, Object> kafka = new LinkedHashMap<>();
        kafka.put("producer", producer.healthy() ? "UP" : "DOWN");
        kafka.put("inbox", inbox != null && inbox.healthy() ? "UP" : "DOWN");
        kafka.put("views", views != null && views.healthy() ? "UP" : "DOWN");
        kafka.put("tools", tools != null && tools.healthy() ? "UP" : "DOWN");
        boolean ready = !kafka.containsValue("DOWN");
        return new HealthServer.Status(ready, true, Map.of("kafka", kafka, "runningTurns", registry.runningCount()));
    }

    /** A turn's tenant from its lifecycle events, which every gateway reads. */
    private static java.util.function.Function<String, Optional<TurnOwnership.Owner>> ownerInKafka(TurnViews views) {
        return turnId -> views.snapshot(turnId, null)
                .map(snapshot -> new TurnOwnership.Owner(snapshot.turn() == null ? null : snapshot.turn().tenantId()));
    }

    /** With provider keys and URLs from the environment. */
    public static Gateway start(Settings settings) {
        return start(settings, ProviderEndpoints.fromEnvironment(System.getenv()), List.of());
    }

    /** @param extraRoutes more routes for the same HTTP server */
    public static Gateway start(Settings settings, ProviderEndpoints endpoints, List<GatewayServer.Routes> extraRoutes) {
        return new Gateway(settings, endpoints, extraRoutes, null);
    }

    /** Starts a turn of no tenant (the gateway without keys) in a fresh trace. */
    public TurnStatus startTurn(TurnRequest request) {
        return startTurn(request, null, TraceContext.fresh());
    }

    /** As {@link #start(Settings, ProviderEndpoints, List)}, with its meters in the caller's registry (closed by the caller). */
    public static Gateway start(Settings settings, ProviderEndpoints endpoints, List<GatewayServer.Routes> extraRoutes,
                                ServiceMetrics shared) {
        return new Gateway(settings, endpoints, extraRoutes, shared);
    }

    /**
     * Starts a turn and returns at once; the turn runs in the background. Invalid requests, and turns over
     * the gateway's or the tenant's limits, throw {@link ApiError}.
     *
     * @param tenantId the caller's tenant; null when the gateway runs without keys
     * @param trace the trace context every record of the turn carries
     */
    public TurnStatus startTurn(TurnRequest request, String tenantId, TraceContext trace) {
        Providers.Resolved provider = providers.resolve(request.provider(), request.model());
        if (registry.runningCount() >= config.maxConcurrentTurns()) {
            metrics.increment(GatewayMetrics.Counter.TURNS_REJECTED);
            throw new ApiError(429, "the gateway is running its limit of " + config.maxConcurrentTurns()
                    + " turns; try again when one finishes");
        }
        TenantLimits.Permit permit;
        try {
            permit = tenantLimits.acquire(tenantId);
        } catch (ApiError overLimit) {
            metrics.increment(GatewayMetrics.Counter.TURNS_REJECTED);
            throw overLimit;
        }
        String turnId = "turn-" + UUID.randomUUID();
        String runId = "run-" + UUID.randomUUID();
        String threadId = request.threadId() != null ? request.threadId() : "thread-" + UUID.randomUUID();
        AgentLoop.Turn turn = new AgentLoop.Turn(turnId, threadId, runId, provider,
                request.fallbackModel() != null ? request.fallbackModel() : config.fallbackModel(), request.system(),
                request.conversation(), request.prompt(), request.tools() != null ? request.tools() : toolsToOffer(),
                request.maxSteps() != null ? request.maxSteps() : config.maxSteps(), trace, tenantId);
        TurnStatus status = new TurnStatus(turnId, threadId, runId, TurnStatus.RUNNING);
        TurnRegistry.ActiveTurn active = registry.register(status);
        ownership.accepted(turnId, tenantId);
        AgentLoop loop = new AgentLoop(turn, active, registry, producer, client, metrics, config);
        try {
            turns.execute(() -> {
                try {
                    loop.run();
                } finally {
                    permit.release();
                }
            });
        } catch (RejectedExecutionException shuttingDown) {
            permit.release();
            registry.finish(turnId, "error");
            throw new ApiError(503, "the gateway is shutting down");
        }
        metrics.increment(GatewayMetrics.Counter.TURNS_STARTED);
        return status;
    }

    /**
     * Stops a running turn (status {@code aborted}, open items closed) and publishes the cancel to
     * the control topic, so the tool executor aborts the turn's running tools.
     */
    public CancelOutcome cancel(String turnId, String reason) {
        Optional<TurnStatus> status = registry.status(turnId);
        if (status.isEmpty()) {
            return CancelOutcome.UNKNOWN;
        }
        if (!registry.cancel(turnId, reason)) {
            return CancelOutcome.FINISHED;
        }
        producer.control(ControlMessage.cancel(turnId, reason)).whenComplete((ok, error) -> {
            if (error != null) {
                LOG.error("cannot publish the cancel of turn {}: {}", turnId, error.getMessage());
            }
        });
        return CancelOutcome.CANCELLING;
    }

    /** The tools a turn that names none is offered: what the tool executors published (see {@link ToolCatalog}). */
    public List<ToolDefinition> offeredTools() {
        return tools.offered();
    }

    private List<ToolDefinition> toolsToOffer() {
        List<ToolDefinition> offered = tools.offered();
        if (offered.isEmpty()) {
            LOG.warn("no tool executor has published its tools on {}: the model is offered no tools", tools.topic());
        }
        return offered;
    }

    /** Reads what the executors published before taking turns, boundedly: a turn started earlier would be offered none. */
    private void awaitPublishedTools() {
        try {
            tools.loaded().get(PUBLISHED_TOOLS_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException e) {
            LOG.warn("the published tool definitions are not read yet; turns are offered what has arrived");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    public Optional<TurnStatus> status(String turnId) {
        return registry.status(turnId);
    }

    /**
     * The turn as a user interface sees it: its upserts folded into the current state (from Kafka, so
     * also for turns other gateways run), with this gateway's own status when it runs the turn.
     */
    public Optional<TurnSnapshot> snapshot(String turnId) {
        return views.snapshot(turnId, registry.status(turnId).orElse(null));
    }

    /**
     * Which tenant's each turn is, for routes that find a turn other than by {@code /v1/turns/{turnId}} (those
     * the {@link RequestGuard} checks itself): {@code turnOwnership().require(RequestGuard.tenant(ctx), turnId)}.
     */
    public TurnOwnership turnOwnership() {
        return ownership;
    }

    /** The views of turns this gateway serves, for in-process clients and tests. */
    public TurnViews views() {
        return views;
    }

    /** The provider of turns that name none: Anthropic or OpenAI when their key is set, else the simulated one. */
    public String defaultProvider() {
        return providers.defaultProvider();
    }

    public GatewayMetrics metrics() {
        return metrics;
    }

    public int port() {
        return server.port();
    }

    /** The port of {@code /health}, {@code /health/live} and {@code /metrics}. */
    public int managementPort() {
        return management.port();
    }

    public String baseUrl() {
        return server.baseUrl();
    }

    /** Stops accepting turns, cancels the running ones (they end {@code aborted}), then stops everything. */
    @Override
    public void close() {
        server.close();
        management.close();
        registry.running().forEach(turn -> turn.cancel.cancel("the gateway is shutting down"));
        turns.shutdown();
        try {
            if (!turns.awaitTermination(30, TimeUnit.SECONDS)) {
                LOG.warn("some turns did not stop within 30 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        inbox.close();
        tools.close();
        views.close();
        producer.close();
        providers.close();
        watchdog.close();
        closeOwnMetrics();
    }

    private void closeOwnMetrics() {
        if (ownsMetrics) {
            serviceMetrics.close();
        }
    }
}
