package io.turnstream.gateway;

import io.turnstream.gateway.chat.ChatApi;
import io.turnstream.gateway.provider.ProviderClient;
import io.turnstream.gateway.provider.StallWatchdog;
import io.turnstream.gateway.provider.ToolDefinition;
import io.turnstream.gateway.security.RequestGuard;
import io.turnstream.gateway.security.TenantLimits;
import io.turnstream.gateway.security.TurnOwnership;
import io.turnstream.gateway.view.TurnEventsApi;
import io.turnstream.gateway.view.TurnSnapshot;
import io.turnstream.gateway.view.TurnViews;
import io.turnstream.model.ControlMessage;
import io.turnstream.model.Json;
import io.turnstream.model.Topics;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.Failures;
import io.turnstream.runtime.HealthServer;
import io.turnstream.runtime.ServiceMetrics;
import io.turnstream.runtime.Settings;
import io.turnstream.runtime.TraceContext;
import io.turnstream.schema.WireFormats;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
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
        /** The cancel is on {@code llm.control}: the gateway that runs the turn stops it. */
        CANCELLING,
        /** The turn already finished here. */
        FINISHED
    }

    /** How long a starting gateway waits to read the published tool definitions. */
    private static final Duration PUBLISHED_TOOLS_WAIT = Duration.ofSeconds(10);
    /** How long an accepted turn may take to reach {@code llm.turn-requests} before the caller hears 503. */
    private static final long ACCEPT_TIMEOUT_MS = 30_000;

    private final GatewayConfig config;
    private final Clock clock;
    private final GatewayMetrics metrics = new GatewayMetrics();
    private final TurnRegistry registry = new TurnRegistry();
    private final ApprovalDecisions approvals = new ApprovalDecisions();
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
    /** Tenant permits of turns accepted here, by turn id, until the turn ends (here or on another gateway). */
    private final Map<String, TenantLimits.Permit> permits = new ConcurrentHashMap<>();
    private final TurnResumer resumer;
    private final PartitionOwnership partitions;
    private final GatewayServer server;
    private final HealthServer management;
    private final ServiceMetrics serviceMetrics;
    private final boolean ownsMetrics;

    private Gateway(Settings settings, ProviderEndpoints endpoints, List<GatewayServer.Routes> extraRoutes,
                    ServiceMetrics shared) {
        this.config = GatewayConfig.from(settings);
        this.clock = settings.clock();
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
        this.resumer = new TurnResumer(settings.kafkaProperties(), topics, wire);
        TurnInbox startedInbox = null;
        TurnViews startedViews = null;
        GatewayServer startedServer = null;
        ToolCatalog startedTools = null;
        try {
            startedTools = new ToolCatalog(settings.kafkaProperties(), topics.toolDefinitions(), wire);
            startedInbox = new TurnInbox(settings.kafkaProperties(), topics, wire, registry, approvals, metrics);
            startedInbox.bindTo(serviceMetrics);
            startedViews = TurnViews.start(settings, wire);
            this.ownership = new TurnOwnership(ownerInKafka(startedViews), config.security().unknownTurnGrace());
            List<GatewayServer.Routes> routes = new ArrayList<>();
            routes.add(new TurnsApi(this));
            routes.add(new ApprovalsApi(this));
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
            resumer.close();
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
        // last: from here on, this gateway takes turns from Kafka
        this.partitions = new PartitionOwnership(settings.kafkaProperties(), topics, wire,
                OwnershipConfig.from(settings), resumer, this::runTurn, serviceMetrics, clock);
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
        kafka.put("turn-ownership", partitions != null && partitions.healthy() ? "UP" : "DOWN");
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
     * Accepts a turn: validates it, puts it on {@code llm.turn-requests} and returns once Kafka has
     * it; the gateway that owns the thread's partition runs it (maybe this one). Invalid requests,
     * and turns over the gateway's or the tenant's limits, throw {@link ApiError}.
     *
     * @param tenantId the caller's tenant; null when the gateway runs without keys
     * @param trace the trace context every record of the turn carries
     */
    public TurnStatus startTurn(TurnRequest request, String tenantId, TraceContext trace) {
        providers.resolve(request.provider(), request.model());
        if (registry.runningCount() >= config.maxConcurrentTurns()) {
            metrics.increment(GatewayMetrics.Counter.TURNS_REJECTED);
            throw new ApiError(429, "the gateway is running its limit of " + config.maxConcurrentTurns()
                    + " turns; try again when one finishes");
        }
        releaseEndedPermits();
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
        try {
            producer.turnRequest(TurnRequestRecord.request(turnId, threadId, runId, tenantId, clock.millis(),
                    request.toJson()), trace).get(ACCEPT_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            permit.release();
            throw new ApiError(503, "the gateway is shutting down");
        } catch (ExecutionException | TimeoutException e) {
            permit.release();
            LOG.error("cannot put turn {} on the turn requests topic: {}", turnId, Failures.describe(e));
            throw new ApiError(503, "the turn could not be queued (Kafka is unavailable); try again");
        }
        permits.put(turnId, permit);
        ownership.accepted(turnId, tenantId);
        metrics.increment(GatewayMetrics.Counter.TURNS_STARTED);
        return new TurnStatus(turnId, threadId, runId, TurnPhase.RUNNING);
    }

    /** Permits of turns accepted here that ended, here or, as Kafka shows, on another gateway. */
    private void releaseEndedPermits() {
        permits.forEach((turnId, permit) -> {
            boolean ended = registry.status(turnId).map(status -> status.status().ended())
                    .orElseGet(() -> views.snapshot(turnId, null)
                            .map(snapshot -> snapshot.status().ended()).orElse(false));
            if (ended && permits.remove(turnId, permit)) {
                permit.release();
            }
        });
    }

    /**
     * Runs a turn of a partition this gateway owns: from the start, or, resumed, from what Kafka
     * holds of it. Called on the ownership thread; the turn runs on its own.
     */
    private void runTurn(TurnRequestRecord record, TraceContext trace, List<TurnRequestRecord> steps, boolean resume,
                         OwnedPartition partition, long offset) {
        AgentLoop.Turn turn;
        try {
            TurnRequest request = TurnRequest.parse(Json.toString(record.request()));
            Providers.Resolved provider = providers.resolve(request.provider(), request.model());
            turn = new AgentLoop.Turn(record.turnId(), record.threadId(), record.runId(), provider,
                    request.fallbackModel() != null ? request.fallbackModel() : config.fallbackModel(), request.system(),
                    request.conversation(), request.prompt(), request.tools() != null ? request.tools() : toolsToOffer(),
                    request.maxSteps() != null ? request.maxSteps() : config.maxSteps(), trace, record.tenantId());
        } catch (RuntimeException e) {
            LOG.error("turn {} cannot run here and is skipped: {}", record.turnId(), e.getMessage());
            partition.alreadyFinished(offset);
            return;
        }
        TurnRegistry.ActiveTurn active = registry.register(new TurnStatus(turn.turnId(), turn.threadId(), turn.runId(),
                TurnPhase.RUNNING));
        partition.started(offset, active);
        try {
            turns.execute(() -> {
                try {
                    TurnProgress progress = resume
                            ? resumer.progress(record, steps, turn.provider().model(), active)
                            : TurnProgress.fresh(turn.provider().model());
                    if (progress.endedStatus() != null) {
                        registry.finish(turn.turnId(), TurnPhase.endedAs(progress.endedStatus()));
                    } else {
                        if (resume) {
                            metrics.increment(GatewayMetrics.Counter.TURNS_RESUMED);
                            approvals.showAwaiting(turn.turnId(), progress, active);
                        }
                        new AgentLoop(turn, progress, active, registry, partition.publisherFor(record, trace), client,
                                metrics, config).run();
                    }
                } catch (RuntimeException e) {
                    LOG.error("cannot resume turn {}; leaving it to the partition's next owner", turn.turnId(), e);
                    active.handover.complete(null);
                    registry.release(turn.turnId());
                } finally {
                    partition.stopped(offset, turn.turnId(), active.handover.isDone());
                    TenantLimits.Permit permit = active.handover.isDone() ? null : permits.remove(turn.turnId());
                    if (permit != null) {
                        permit.release();
                    }
                }
            });
        } catch (RejectedExecutionException shuttingDown) {
            active.handover.complete(null);
            registry.release(turn.turnId());
            partition.stopped(offset, turn.turnId(), true);
        }
    }

    /**
     * Cancels a turn wherever it runs: the cancel goes to the control topic, where the gateway
     * running the turn stops it (status {@code aborted}, open items closed) and the tool executor
     * aborts its running tools.
     */
    public CancelOutcome cancel(String turnId, String reason) {
        Optional<TurnStatus> status = registry.status(turnId);
        if (status.isPresent() && status.get().status().ended()) {
            return CancelOutcome.FINISHED;
        }
        try {
            producer.control(ControlMessage.cancel(turnId, reason)).get(ACCEPT_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ApiError(503, "the gateway is shutting down");
        } catch (ExecutionException | TimeoutException e) {
            LOG.error("cannot publish the cancel of turn {}: {}", turnId, Failures.describe(e));
            throw new ApiError(503, "the cancel could not be sent (Kafka is unavailable); try again");
        }
        return CancelOutcome.CANCELLING;
    }

    /**
     * A person's decision on a tool call awaiting approval: published to the control topic unless a
     * decision already stands, then answered with the decision that stands, which is the first one
     * after the executor asked (see {@link ApprovalDecisions}); repeating a request changes nothing.
     *
     * @throws ApiError 404 when the call is not awaiting approval (after the unknown-turn grace), 503 when
     *                  the decision cannot be published or is not seen back in time
     */
    public ApprovalDecisions.Decision decideApproval(String turnId, String callId, boolean approved, String reason) {
        ApprovalDecisions.Round round = approvals.round(turnId, callId);
        try {
            try {
                round.asked.get(config.security().unknownTurnGrace().toMillis(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                throw ApiError.notFound("no tool call " + callId + " of turn " + turnId + " is awaiting approval");
            }
            if (!round.decision.isDone()) {
                producer.control(ControlMessage.approval(turnId, callId, approved, reason))
                        .get(ApprovalDecisions.CONFIRM_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            }
            return round.decision.get(ApprovalDecisions.CONFIRM_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ApiError(503, "interrupted while publishing the decision");
        } catch (ExecutionException | TimeoutException e) {
            LOG.error("cannot publish the approval decision on call {} of turn {}: {}", callId, turnId, e.getMessage());
            throw new ApiError(503, "the decision could not be published or confirmed in time; send it again");
        }
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

    /**
     * Drains: stops accepting turns, lets running turns reach a step boundary (up to the drain
     * timeout) and hands them over to the other gateways of the group, then stops everything.
     */
    @Override
    public void close() {
        server.close();
        management.close();
        partitions.close();
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
        resumer.close();
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
