package io.turnstream.runtime;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.storage.Formatter;
import org.apache.kafka.server.common.MetadataVersion;

/**
 * A real KRaft node (combined broker and controller) inside this JVM: a cluster of its own by
 * default, or one node of a {@link KraftQuorum} of several, with the replication and
 * transaction-log settings that cluster's size needs. Used by {@code turnstream broker}, by the
 * demo and by every integration test. It can be stopped and started again on the same ports and
 * data directory, which is how tests make the broker unavailable for a while.
 */
public final class EmbeddedKafkaBroker implements AutoCloseable {

    private static final String HOST = "127.0.0.1";
    private static final String CLIENT_LISTENER = "CLIENT";
    private static final String CONTROLLER_LISTENER = "CONTROLLER";

    private final Path dataDir;
    private final int port;
    private final KraftQuorum quorum;
    private final Map<String, String> overrides;
    /** Where the client listener binds and what it tells clients: loopback unless {@link #listeningOn} says otherwise. */
    private String listenHost = HOST;
    private String advertisedHost = HOST;
    private BrokerSecurity security;
    private KafkaRaftServer server;

    /**
     * @param port the client port, 0 for a free one
     * @param dataDir where logs and metadata live; formatted on first start, reused after
     * @param overrides broker properties that win over the defaults
     */
    public EmbeddedKafkaBroker(int port, Path dataDir, Map<String, String> overrides) {
        // Chosen together: two separate picks may return the same port, and the broker refuses that.
        List<Integer> free = FreePorts.take(2);
        this.port = port == 0 ? free.get(0) : port;
        this.quorum = KraftQuorum.single(HOST, free.get(0) == this.port ? free.get(1) : free.get(0));
        this.dataDir = dataDir;
        this.overrides = Map.copyOf(overrides);
    }

    /**
     * One node of a multi-node cluster: its controller listens on its voter's port.
     *
     * @param port the client port (not 0: the other nodes and the clients must know it)
     */
    public EmbeddedKafkaBroker(int port, Path dataDir, KraftQuorum quorum, Map<String, String> overrides) {
        this.port = port;
        this.quorum = quorum;
        this.dataDir = dataDir;
        this.overrides = Map.copyOf(overrides);
    }

    public EmbeddedKafkaBroker(int port, Path dataDir) {
        this(port, dataDir, Map.of());
    }

    /** A broker on free ports in a fresh temporary directory. */
    public static EmbeddedKafkaBroker onFreePort() {
        try {
            return new EmbeddedKafkaBroker(0, Files.createTempDirectory("turnstream-kafka"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public String bootstrapServers() {
        return advertisedHost + ":" + port;
    }

    /**
     * Serves clients on {@code host} (0.0.0.0 in a container, say) and tells them to connect to
     * {@code advertisedHost} (the container's name); before it starts. The controller stays on loopback.
     */
    public synchronized EmbeddedKafkaBroker listeningOn(String host, String advertisedHost) {
        if (server != null) {
            throw new IllegalStateException("choose the broker's host before it starts");
        }
        this.listenHost = host;
        this.advertisedHost = advertisedHost;
        return this;
    }

    /** Whether clients can reach it only from this machine (it listens on a loopback address). */
    public boolean loopbackOnly() {
        return isLoopback(listenHost);
    }

    /** Whether {@code host} is a loopback address (a name that does not resolve counts as not). */
    public static boolean isLoopback(String host) {
        try {
            return java.net.InetAddress.getByName(host).isLoopbackAddress();
        } catch (java.net.UnknownHostException e) {
            return false;
        }
    }

    public KraftQuorum quorum() {
        return quorum;
    }

    public Path dataDir() {
        return dataDir;
    }

    /**
     * Runs the broker with SASL/SCRAM and ACLs ({@link BrokerSecurity}) from its next start on; a data
     * directory first formatted without security cannot be secured later (its metadata has no admin).
     */
    public synchronized EmbeddedKafkaBroker secured(BrokerSecurity security) {
        if (server != null) {
            throw new IllegalStateException("secure the broker before it starts");
        }
        this.security = security;
        return this;
    }

    /** The security this broker runs with, or null when it is open (PLAINTEXT, no ACLs). */
    public BrokerSecurity security() {
        return security;
    }

    /** What a client needs to connect: the bootstrap servers, and the admin's credentials when secured. */
    public Properties adminProperties() {
        Properties p = security == null ? new Properties() : security.clientProperties(BrokerSecurity.ADMIN);
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        return p;
    }

    /** Formats the data directory if needed, starts the node and waits until it serves clients. */
    public synchronized EmbeddedKafkaBroker start() {
        if (server != null) {
            return this;
        }
        KafkaConfig config = new KafkaConfig(brokerProperties());
        format(config);
        server = new KafkaRaftServer(config, Time.SYSTEM);
        server.startup();
        awaitReady(Duration.ofSeconds(180));
        if (security != null) {
            provision();
        }
        return this;
    }

    /** Controlled shutdown; the data directory stays, so {@link #start()} brings the same cluster back. */
    public synchronized void stop() {
        if (server != null) {
            server.shutdown();
            server.awaitShutdown();
            server = null;
        }
    }

    @Override
    public void close() {
        stop();
    }

    private Properties brokerProperties() {
        Properties p = new Properties();
        p.put("process.roles", "broker,controller");
        p.put("listeners", CLIENT_LISTENER + "://" + listenHost + ":" + port + "," + CONTROLLER_LISTENER + "://" + HOST + ":" + quorum.self().port());
        p.put("advertised.listeners", CLIENT_LISTENER + "://" + advertisedHost + ":" + port);
        p.put("controller.listener.names", CONTROLLER_LISTENER);
        p.put("inter.broker.listener.name", CLIENT_LISTENER);
        p.put("listener.security.protocol.map", CLIENT_LISTENER + ":PLAINTEXT," + CONTROLLER_LISTENER + ":PLAINTEXT");
        p.put("log.dirs", dataDir.resolve("logs").toString());
        p.putAll(quorum.properties());
        p.put("offsets.topic.num.partitions", "10");
        p.put("transaction.state.log.num.partitions", "10");
        p.put("group.initial.rebalance.delay.ms", "0");
        // group members may take a dead member for dead after 3 s, not Kafka's 6 s: the services ask for
        // the lowest their brokers allow down to this (FailoverDefaults, docs/runtime.md "Failover")
        p.put("group.min.session.timeout.ms", "3000");
        // a dead producer's timed-out transaction is aborted within a second, not ten: the topology's
        // takeover waits for it (docs/runtime.md, "Failover")
        p.put("transaction.abort.timed.out.transaction.cleanup.interval.ms", "1000");
        p.put("auto.create.topics.enable", "false");
        if (security != null) {
            p.putAll(security.brokerProperties(CLIENT_LISTENER, CONTROLLER_LISTENER, loopbackOnly()));
        }
        p.putAll(overrides);
        return p;
    }

    private void format(KafkaConfig config) {
        if (Files.exists(dataDir.resolve("logs").resolve("meta.properties"))) {
            if (security != null && !BrokerSecurity.present(security.credentialsDir())) {
                throw new IllegalStateException("the data directory " + dataDir + " was created without security (no "
                        + security.credentialsDir() + "): secure a new one");
            }
            return;
        }
        try {
            Formatter formatter = new Formatter();
            if (security != null) {
                // the admin's password is kept before the metadata holds it, so no crash can lose it
                security.writeClientFiles(bootstrapServers(), loopbackOnly());
                formatter.setScramArguments(security.formatScramArguments());
            }
            formatter
                    .setPrintStream(new java.io.PrintStream(java.io.OutputStream.nullOutputStream()))
                    .setNodeId(config.nodeId())
                    .setClusterId(quorum.clusterId())
                    .setControllerListenerName(CONTROLLER_LISTENER)
                    .setMetadataLogDirectory(config.metadataLogDir())
                    .setDirectories(List.of(dataDir.resolve("logs").toString()))
                    .setReleaseVersion(MetadataVersion.LATEST_PRODUCTION)
                    .run();
        } catch (Exception e) {
            throw new IllegalStateException("cannot format the broker data directory " + dataDir + ": " + e.getMessage(), e);
        }
    }

    /** Creates the service principals and their ACLs, and writes the client files. */
    private void provision() {
        try (Admin admin = Admin.create(adminProperties())) {
            security.provision(admin, bootstrapServers(), loopbackOnly());
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("cannot create the broker's principals and ACLs: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while creating the broker's principals and ACLs", e);
        }
    }

    private void awaitReady(Duration timeout) {
        Properties p = adminProperties();
        long deadline = System.nanoTime() + timeout.toNanos();
        try (Admin admin = Admin.create(p)) {
            while (true) {
                try {
                    if (!admin.describeCluster().nodes().get(5, TimeUnit.SECONDS).isEmpty()) {
                        return;
                    }
                } catch (ExecutionException | TimeoutException notYet) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("broker did not become ready within " + timeout, notYet);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while waiting for the broker", e);
                }
            }
        }
    }
}
