package io.turnstream.runtime;

import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;

/**
 * How soon a dead instance's work moves to a live one, at Kafka's default broker settings: the
 * defaults every Turnstream group member and transactional producer starts from, each overridable
 * by the same key in {@code --config}. docs/runtime.md explains the trade-offs.
 */
public final class FailoverDefaults {

    /**
     * The lowest session timeout a broker allows at its default {@code group.min.session.timeout.ms}:
     * a member that stops heartbeating (SIGKILL, lost machine) leaves the group after 6 s, not Kafka's 45 s.
     * Used where what the brokers allow is not known; the services' commands ask the cluster first
     * ({@link #PREFERRED_SESSION_TIMEOUT_MS}).
     */
    public static final String SESSION_TIMEOUT_MS = "6000";
    /**
     * The session timeout a member asks for where the brokers allow it (their {@code group.min.session.timeout.ms}
     * at most this; Turnstream's own brokers set it so): a SIGKILLed member is taken for dead after 3 s. Six
     * heartbeats fit in it, so a member whose heartbeats are late by a second or two on a loaded machine stays.
     * {@link #sessionTimeoutAllowed} fits it to what a cluster allows.
     */
    public static final int PREFERRED_SESSION_TIMEOUT_MS = 3000;
    /**
     * How soon a survivor hears that a dead member's session expired: the coordinator does not tell the other
     * members, each learns it from the answer to its next heartbeat. The dead member's session counts from its last
     * heartbeat, so from a SIGKILL to the survivor's rejoin takes the session timeout plus or minus up to one
     * interval: 4.5 to 7.5 s at 1.5 s, 5.5 to 6.5 s at 0.5 s (the same 6 s on average, a second less at worst). The
     * price is two heartbeat requests a second per member instead of two every three seconds. Well under a third
     * of the session timeout, as Kafka asks: a few lost heartbeats are not a death.
     */
    public static final String HEARTBEAT_INTERVAL_MS = "500";
    /**
     * How long a dead producer's open transaction blocks read_committed readers when no new owner
     * fences it (the broker aborts it this long after it began, at its next abort check).
     */
    public static final String TRANSACTION_TIMEOUT_MS = "5000";
    /**
     * The transaction timeout of a producer whose successor fences it by its transactional id (a gateway's
     * turn producer, one per partition): the next owner aborts a dead one's transaction as it takes the
     * partition over, so this bounds only what no successor takes (every gateway gone) and must outlast the
     * longest transaction a live owner keeps open. The longest is one open while a broker dies: its writes to the
     * partitions that broker led, and its commit if it was the transaction coordinator, wait until the controllers
     * fence it ({@code broker.session.timeout.ms}, 9 s by default) and new leaders take over, 11 s and more after
     * the transaction began. A transaction older than its timeout is aborted by the coordinator, which bumps the
     * producer's epoch to fence it ({@code TransactionCoordinator.abortTimedOutTransactions}): the live owner's
     * commit then fails with {@code InvalidProducerEpochException} and it takes its own partition over again,
     * calling the model again for every turn streaming there (10 s did that once a broker failover in a cluster
     * run). 30 s outlasts a failover with room for a loaded machine; Kafka's producer default is 60 s.
     */
    public static final String FENCED_TRANSACTION_TIMEOUT_MS = "30000";

    private FailoverDefaults() {
    }

    /**
     * Session and heartbeat defaults of a consumer group member under the classic group protocol.
     * Under {@code group.protocol=consumer} (KIP-848) or {@code streams} (KIP-1071) the broker sets
     * them per group, and a client that sets them is refused; they are left out then.
     */
    public static void groupMember(Properties props) {
        String protocol = props.getProperty(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
        if ("classic".equalsIgnoreCase(protocol)) {
            props.putIfAbsent(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, SESSION_TIMEOUT_MS);
            props.putIfAbsent(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, HEARTBEAT_INTERVAL_MS);
        }
    }

    /**
     * The session timeout a member asks for on brokers that allow {@code minMs} to {@code maxMs} (their
     * {@code group.min.session.timeout.ms} and {@code group.max.session.timeout.ms}): the preferred 3 s, or the
     * nearest they allow. A broker refuses a member outside its range ({@code InvalidSessionTimeoutException}).
     */
    public static int sessionTimeoutAllowed(int minMs, int maxMs) {
        return Math.min(Math.max(PREFERRED_SESSION_TIMEOUT_MS, minMs), maxMs);
    }

    /** The transaction timeout of a producer whose transactions a successor cannot fence by id. */
    public static void transactionalProducer(Properties props) {
        props.putIfAbsent(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, TRANSACTION_TIMEOUT_MS);
    }

    /** The transaction timeout of a producer whose successor fences it by id ({@link #FENCED_TRANSACTION_TIMEOUT_MS}). */
    public static void fencedTransactionalProducer(Properties props) {
        props.putIfAbsent(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, FENCED_TRANSACTION_TIMEOUT_MS);
    }
}
