package io.turnstream.gateway;

import io.turnstream.gateway.api.ApprovalsApi;
import io.turnstream.gateway.api.TurnsApi;
import io.turnstream.gateway.api.IdempotencyIndex;
import io.turnstream.gateway.api.IdempotencyKeys;
import io.turnstream.gateway.api.TurnStarts;
import io.turnstream.gateway.chat.ChatApi;
import io.turnstream.gateway.openai.OpenAiApi;
import io.turnstream.gateway.http.GatewayServer;
import io.turnstream.gateway.loop.ApprovalDecisions;
import io.turnstream.gateway.loop.GatewayMetrics;
import io.turnstream.gateway.loop.TurnTracing;
import io.turnstream.gateway.loop.TurnRegistry;
import io.turnstream.gateway.ownership.OwnershipConfig;
import io.turnstream.gateway.ownership.PartitionOwnership;
import io.turnstream.gateway.ownership.TurnInbox;
import io.turnstream.gateway.ownership.TurnResumer;
import io.turnstream.gateway.provider.ProviderClient;
import io.turnstream.gateway.provider.StallWatchdog;
import io.turnstream.gateway.provider.ToolDefinition;
import io.turnstream.gateway.security.RequestGuard;
import io.turnstream.gateway.security.SpendPolicy;
import io.turnstream.gateway.security.TurnOwnership;
import io.turnstream.gateway.spend.SpendLimits;
import io.turnstream.gateway.spend.TenantUsage;
import io.turnstream.gateway.spend.UsageFeed;
import io.turnstream.gateway.thread.BusyThreadPolicy;
import io.turnstream.gateway.thread.ThreadHistory;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.gateway.view.ThreadsApi;
import io.turnstream.gateway.view.TurnEventsApi;
import io.turnstream.gateway.view.TurnViews;
import io.turnstream.model.Topics;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.HealthServer;
import io.turnstream.runtime.ServiceMetrics;
import io.turnstream.runtime.Settings;
import io.turnstream.schema.WireFormats;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The LLM gateway as a service: its wiring and lifecycle. {@link TurnAdmission} accepts turns,
 * {@link TurnCommands} takes cancels and approval decisions, {@link TurnRunner} runs the turns of the
 * partitions this gateway owns ({@link PartitionOwnership}), the routes of {@code api}, {@code view} and
 * {@code chat} serve HTTP. Start it with {@link #start(Settings)} (or in-process with explicit provider
 * endpoints) and close it to stop.
 */
public final class Gateway implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(Gateway.class);

    /** How long a starting gateway waits to read the published tool definitions, and the day's turns and usage. */
    private static final Duration STARTUP_READ_WAIT = Duration.ofSeconds(10);
    /**
     * Idempotency keys, and requested turns, one gateway knows (24 h each): at a few hundred bytes each, tens of MB at
     * most.
     */
    private static final int IDEMPOTENCY_KEYS = 100_000;
    /** How long a request under an Idempotency-Key may wait to read itself back from Kafka, to learn if it won the key. */
    private static final Duration KEY_VERDICT_WAIT = Duration.ofSeconds(10);

    private final GatewayConfig config;
    private final GatewayMetrics metrics = new GatewayMetrics();
    private final TurnRegistry registry = new TurnRegistry();
    private final ApprovalDecisions approvals = new ApprovalDecisions();
    private final StallWatchdog watchdog = new StallWatchdog();
    private final Providers providers;
    private final GatewayProducer producer;
    private final TurnInbox inbox;
    private final ToolCatalog tools;
    private final ThreadAllowanceTopic allowances;
    private final TurnViews views;
    private final IdempotencyIndex idempotency;
    private final TenantUsage tenantUsage;
    private final UsageFeed usageFeed;
    private final TurnOwnership ownership;
    private final TurnAdmission admission;
    private final TurnCommands commands;
    private final TurnRunner runner;
    private final TurnResumer resumer;
    private final PartitionOwnership partitions;
    private final GatewayServer server;
    private final HealthServer management;
    private final ServiceMetrics serviceMetrics;
    private final boolean ownsMetrics;

    private Gateway(Settings settings, ProviderEndpoints endpoints, List<GatewayServer.Routes> extraRoutes,
                    ServiceMetrics shared) {
        this.config = GatewayConfig.from(settings);
        Clock clock = settings.clock();
        config.security().requireSafeToListenOn(config.host());
        BusyThreadPolicy busyPolicy = BusyThreadPolicy.from(settings);
        this.ownsMetrics = shared == null;
        this.serviceMetrics = shared != null ? shared : ServiceMetrics.create("gateway", settings);
        metrics.bindTo(serviceMetrics.registry());
        metrics.traceWith(TurnTracing.fromEnvironment(System.getenv()));
        Topics topics = settings.topics();
        this.providers = new Providers(endpoints, config);
        ProviderClient client = new ProviderClient(ProviderClient.defaultHttpClient(), watchdog, config.stallTimeout());
        WireFormat wire = WireFormats.from(settings);
        this.producer = new GatewayProducer(settings.kafkaProperties(), topics, wire);
        producer.bindTo(serviceMetrics);
        this.resumer = new TurnResumer(settings.kafkaProperties(), topics, wire);
        // a takeover's reads then find their consumers connected (docs/gateway.md, "Takeover")
        resumer.warmUp();
        TurnInbox startedInbox = null;
        TurnViews startedViews = null;
        UsageFeed startedUsageFeed = null;
        GatewayServer startedServer = null;
        ToolCatalog startedTools = null;
        ThreadAllowanceTopic startedAllowances = null;
        IdempotencyIndex startedIdempotency = null;
        try {
            startedTools = new ToolCatalog(settings.kafkaProperties(), topics.toolDefinitions(), wire);
            startedAllowances = new ThreadAllowanceTopic(settings.kafkaProperties(), topics.threadAllowances());
            startedInbox = new TurnInbox(settings.kafkaProperties(), topics, wire, registry, approvals, metrics);
            startedInbox.bindTo(serviceMetrics);
            startedViews = TurnViews.start(settings, wire,
                    () -> metrics.increment(GatewayMetrics.Counter.SSE_STREAMS_FELL_BEHIND));
            SpendLimits spendLimits = SpendLimits.from(settings);
            this.tenantUsage = new TenantUsage(spendLimits, clock);
            startedUsageFeed = UsageFeed.start(settings.kafkaProperties(), topics, wire, tenantUsage, spendLimits, clock);
            awaitUsage(startedUsageFeed);
            startedIdempotency = IdempotencyIndex.start(settings.kafkaProperties(), topics.turnRequests(), wire, clock,
                    IDEMPOTENCY_KEYS);
            awaitStartupRead(startedIdempotency.caughtUp(), "the last day's Idempotency-Keys are not all read yet; "
                    + "a retry of a key not read yet is answered from the turn's ids");
            awaitStartupRead(startedViews.loaded(), "llm.item-state is not all read yet: snapshots and late joiners "
                    + "may miss items until it is, and a thread's next turn waits for it before it rebuilds the conversation");
            IdempotencyIndex requests = startedIdempotency;
            this.ownership = new TurnOwnership(ownerInKafka(startedViews, requests),
                    config.security().unknownTurnGrace());
            SpendPolicy spend = SpendPolicy.from(settings, config.maxSteps(), config.prices(), config.fallbackModel());
            this.admission = new TurnAdmission(config.maxConcurrentTurns(), providers, registry, tenantUsage, spend,
                    producer, ownership, metrics, clock, startedViews, busyPolicy);
            this.commands = new TurnCommands(registry, approvals, startedAllowances.allowances(), producer, startedViews,
                    config.security().unknownTurnGrace(), turnId -> requests.requested(turnId)
                    .map(IdempotencyIndex.Requested::turn));
            List<GatewayServer.Routes> routes = new ArrayList<>();
            TurnViews viewsOfKafka = startedViews;
            TurnStarts starts = new TurnStarts(admission, new IdempotencyKeys(startedIdempotency,
                    turnId -> viewsOfKafka.snapshot(turnId, null).map(snapshot -> snapshot.threadId()), clock,
                    KEY_VERDICT_WAIT));
            routes.add(new TurnsApi(starts, commands));
            routes.add(new ApprovalsApi(commands));
            routes.add(new TurnEventsApi(startedViews));
            routes.add(new ThreadsApi(startedViews));
            routes.add(new ChatApi(starts, startedViews));
            routes.add(new OpenAiApi(starts, startedViews, clock));
            routes.addAll(extraRoutes);
            startedServer = GatewayServer.start(config.host(), config.port(), config.security().maxBodyBytes(),
                    new RequestGuard(config.security(), ownership), routes);
            this.management = HealthServer.start(config.managementHost(), config.managementPort(), this::health,
                    serviceMetrics, Map.of("/metrics", metrics::snapshot));
        } catch (RuntimeException e) {
            if (startedServer != null) {
                startedServer.close();
            }
            if (startedAllowances != null) {
                startedAllowances.close();
            }
            if (startedTools != null) {
                startedTools.close();
            }
            if (startedUsageFeed != null) {
                startedUsageFeed.close();
            }
            if (startedViews != null) {
                startedViews.close();
            }
            if (startedIdempotency != null) {
                startedIdempotency.close();
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
        this.idempotency = startedIdempotency;
        this.usageFeed = startedUsageFeed;
        this.allowances = startedAllowances;
        awaitPublishedTools();
        ThreadHistory history = new ThreadHistory(views, resumer, wire,
                request -> providers.resolve(request.provider(), request.model()).name());
        this.runner = new TurnRunner(config, providers, tools::offered, registry, approvals, allowances.allowances(),
                client, metrics, admission::ended, history, busyPolicy,
                turnId -> views.snapshot(turnId, null).isPresent(),
                turnId -> idempotency.keyTakenBy(turnId, KEY_VERDICT_WAIT).map(TurnStatus::turnId)
                        .filter(winner -> !winner.equals(turnId)), producer::control);
        // last: from here on, this gateway takes turns from Kafka
        this.partitions = new PartitionOwnership(settings.kafkaProperties(), topics, wire,
                OwnershipConfig.from(settings), resumer, runner, serviceMetrics, clock);
        LOG.info("gateway listening on {}; default provider {}; {}", server.baseUrl(), providers.defaultProvider(),
                config.security().keys());
    }

    /** Ready while the gateway's Kafka readers and its producer are; it is never dead in a way a restart would fix. */
    private HealthServer.Status health() {
        Map<String, Object> kafka = new LinkedHashMap<>();
        kafka.put("producer", producer.healthy() ? "UP" : "DOWN");
        kafka.put("inbox", inbox != null && inbox.healthy() ? "UP" : "DOWN");
        kafka.put("views", views != null && views.healthy() && views.loaded().isDone() && idempotency != null
                && idempotency.healthy() ? "UP" : "DOWN");
        kafka.put("tools", tools != null && tools.healthy() ? "UP" : "DOWN");
        kafka.put("usage", usageFeed != null && usageFeed.healthy() ? "UP" : "DOWN");
        kafka.put("thread-allowances", allowances != null && allowances.healthy() ? "UP" : "DOWN");
        kafka.put("turn-ownership", partitions != null && partitions.healthy() ? "UP" : "DOWN");
        boolean ready = !kafka.containsValue("DOWN");
        return new HealthServer.Status(ready, true, Map.of("kafka", kafka, "runningTurns", registry.runningCount()));
    }

    /** A turn's tenant from its lifecycle events, which every gateway reads. */
    /** A turn's tenant from its events, or from its request for a turn that has not started (queued behind its thread). */
    private static java.util.function.Function<String, Optional<TurnOwnership.Owner>> ownerInKafka(TurnViews views,
                                                                                                  IdempotencyIndex requests) {
        return turnId -> views.snapshot(turnId, null)
                .map(snapshot -> new TurnOwnership.Owner(snapshot.turn() == null ? null : snapshot.turn().tenantId()))
                .or(() -> requests.requested(turnId).map(requested -> new TurnOwnership.Owner(requested.tenantId())));
    }

    /** With provider keys and URLs from the environment. */
    public static Gateway start(Settings settings) {
        return start(settings, ProviderEndpoints.fromEnvironment(System.getenv()), List.of());
    }

    /** @param extraRoutes more routes for the same HTTP server */
    public static Gateway start(Settings settings, ProviderEndpoints endpoints, List<GatewayServer.Routes> extraRoutes) {
        return new Gateway(settings, endpoints, extraRoutes, null);
    }

    /** As {@link #start(Settings, ProviderEndpoints, List)}, with its meters in the caller's registry (closed by the caller). */
    public static Gateway start(Settings settings, ProviderEndpoints endpoints, List<GatewayServer.Routes> extraRoutes,
                                ServiceMetrics shared) {
        return new Gateway(settings, endpoints, extraRoutes, shared);
    }

    /** Accepts turns: for in-process clients (the routes get it as {@link io.turnstream.gateway.api.TurnStarter}). */
    public TurnAdmission admission() {
        return admission;
    }

    /** Cancels, approval decisions, statuses and snapshots of turns, for in-process clients. */
    public TurnCommands commands() {
        return commands;
    }

    /** The tools a turn that names none is offered: what the tool executors published (see {@link ToolCatalog}). */
    public List<ToolDefinition> offeredTools() {
        return tools.offered();
    }

    /** Reads what the executors published before taking turns, boundedly: a turn started earlier would be offered none. */
    private void awaitPublishedTools() {
        awaitStartupRead(tools.loaded(), "the published tool definitions are not read yet; turns are offered what has arrived");
    }

    /** Counts the day's turns and usage before serving: a restarted gateway would otherwise allow a spent tenant. */
    private static void awaitUsage(UsageFeed usageFeed) {
        awaitStartupRead(usageFeed.caughtUp(), "the day's turns and usage are not all read yet; tenant limits count what has arrived");
    }

    /** Waits up to {@link #STARTUP_READ_WAIT} for a reader to catch up; past it, or when it failed, says so and goes on. */
    private static void awaitStartupRead(Future<?> read, String notYet) {
        try {
            read.get(STARTUP_READ_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException e) {
            LOG.warn(notYet);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** What each tenant runs and spent today, across all gateway instances as Kafka tells it. */
    public TenantUsage tenantUsage() {
        return tenantUsage;
    }

    /**
     * Which tenant's each turn is, for routes that find a turn other than by {@code /v1/turns/{turnId}} (those
     * the {@link RequestGuard} checks itself): {@code ctx.future(() -> turnOwnership().whenVisible(RequestGuard.tenant(ctx), turnId))}.
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

    /** Whether the API asks for {@code Authorization: Bearer <key>} (API keys are configured). */
    public boolean requiresApiKey() {
        return config.security().keys().configured();
    }

    /**
     * Drains: stops accepting turns, lets running turns reach a step boundary (up to the drain
     * timeout) and hands them over to the other gateways of the group, then stops everything.
     */
    @Override
    public void close() {
        server.close();
        ownership.close();
        management.close();
        partitions.close();
        runner.close();
        inbox.close();
        tools.close();
        usageFeed.close();
        allowances.close();
        views.close();
        idempotency.close();
        resumer.close();
        producer.close();
        providers.close();
        watchdog.close();
        metrics.tracing().close();
        closeOwnMetrics();
    }

    private void closeOwnMetrics() {
        if (ownsMetrics) {
            serviceMetrics.close();
        }
    }
}
