package io.turnstream.runtime;

import io.turnstream.cli.ClusterCheck;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeConsumerGroupsOptions;
import org.apache.kafka.clients.admin.FenceProducersOptions;
import org.apache.kafka.clients.admin.ListTransactionsOptions;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.streams.StreamsConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Aborts the open transaction of a Kafka Streams instance that died (SIGKILL, a lost machine) as soon as its group
 * rebalances without it, instead of when the broker times it out. Under exactly-once v2 each stream thread's producer
 * has the transactional id {@code <application id>-<process id>-<thread>}, which no survivor shares, so nothing
 * fences a dead instance's open transaction: until its {@code transaction.timeout.ms} (5 s) and the broker's next
 * abort check it holds back every read_committed reader of the partitions it wrote, the survivor's restore of its
 * changelogs and the committed offsets of its input (their fetch answers {@code UNSTABLE_OFFSET_COMMIT}). With a 3 s
 * session timeout that was the longest wait of a takeover.
 * <p>
 * At each rebalance it lists the application's ongoing transactions, then the group's members, and fences
 * ({@link Admin#fenceProducers}, KIP-618: the coordinator aborts the open transaction and bumps the epoch) those of
 * process ids no member has. In that order: a transaction listed first was opened by an instance that was a member
 * then; not one now, it has left the group, and Kafka Streams would fence it as a zombie at its next commit anyway.
 * A member's process id is read from its client id, so where the user set {@code client.id} (no process id in it)
 * it stands aside and the broker's timeout ends such transactions as before.
 */
final class DeadInstanceFencer implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(DeadInstanceFencer.class);
    private static final Pattern PROCESS_ID = Pattern.compile(
            "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private final String applicationId;
    private final Admin admin;
    private final ExecutorService worker = Executors.newSingleThreadExecutor(runnable -> {
        Thread thread = new Thread(runnable, "dead-instance-fencer");
        thread.setDaemon(true);
        return thread;
    });
    /** Set while a fencing waits to run: rebalances reported meanwhile need no run of their own. */
    private final AtomicBoolean scheduled = new AtomicBoolean();

    private DeadInstanceFencer(String applicationId, Properties adminProperties) {
        this.applicationId = applicationId;
        this.admin = Admin.create(adminProperties);
    }

    /**
     * A fencer for the application of these Streams properties, where its members' transactions can be told
     * apart: exactly-once v2, the classic group protocol (a Streams group is not described as a consumer group), no
     * {@code client.id} of the user's.
     */
    static Optional<DeadInstanceFencer> forApplication(Properties streamsProperties) {
        boolean exactlyOnce = StreamsConfig.EXACTLY_ONCE_V2.equals(
                streamsProperties.getProperty(StreamsConfig.PROCESSING_GUARANTEE_CONFIG));
        boolean classic = "classic".equalsIgnoreCase(
                streamsProperties.getProperty(StreamsConfig.GROUP_PROTOCOL_CONFIG, "classic"));
        if (!exactlyOnce || !classic || streamsProperties.containsKey(StreamsConfig.CLIENT_ID_CONFIG)) {
            return Optional.empty();
        }
        String applicationId = streamsProperties.getProperty(StreamsConfig.APPLICATION_ID_CONFIG);
        Properties admin = ClusterCheck.adminProperties(Settings.of(streamsProperties));
        admin.setProperty(AdminClientConfig.CLIENT_ID_CONFIG, applicationId + "-dead-instance-fencer");
        return Optional.of(new DeadInstanceFencer(applicationId, admin));
    }

    /** Fences soon, off the caller's thread (a stream thread reporting the state change). */
    void rebalanceStarted() {
        if (scheduled.compareAndSet(false, true)) {
            worker.execute(() -> {
                scheduled.set(false);
                fenceDeadInstances();
            });
        }
    }

    /** Fences the ongoing transactions of instances gone from the group; returns their transactional ids. */
    Set<String> fenceDeadInstances() {
        long timeoutMs = TIMEOUT.toMillis();
        try {
            List<String> ongoing = admin.listTransactions(new ListTransactionsOptions()
                            .filterStates(List.of(TransactionState.ONGOING)).timeoutMs((int) timeoutMs))
                    .all().get(timeoutMs, TimeUnit.MILLISECONDS).stream()
                    .map(TransactionListing::transactionalId)
                    .filter(id -> processIdOfTransaction(applicationId, id) != null)
                    .toList();
            if (ongoing.isEmpty()) {
                return Set.of();
            }
            List<String> members = admin.describeConsumerGroups(List.of(applicationId),
                            new DescribeConsumerGroupsOptions().timeoutMs((int) timeoutMs))
                    .describedGroups().get(applicationId).get(timeoutMs, TimeUnit.MILLISECONDS)
                    .members().stream().map(MemberDescription::clientId).toList();
            Set<String> dead = transactionsOfDeadInstances(applicationId, ongoing, members);
            if (!dead.isEmpty()) {
                admin.fenceProducers(dead, new FenceProducersOptions().timeoutMs((int) timeoutMs))
                        .all().get(timeoutMs, TimeUnit.MILLISECONDS);
                LOG.info("{}: aborted the open transactions of instances gone from the group: {}", applicationId, dead);
            }
            return dead;
        } catch (ExecutionException | TimeoutException | KafkaException e) {
            LOG.warn("{}: could not fence the transactions of instances gone from the group (the broker aborts them at "
                    + "their transaction timeout): {}", applicationId,
                    Failures.describe(e instanceof ExecutionException ? e.getCause() : e));
            return Set.of();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Set.of();
        }
    }

    /**
     * Of the application's ongoing transactions, those whose process id no member's client id holds; none when a
     * member's client id holds no process id (the user's {@code client.id}, or another kind of member): its own
     * transactions could not be told from a dead instance's.
     */
    static Set<String> transactionsOfDeadInstances(String applicationId, Collection<String> ongoingTransactionalIds,
                                                   Collection<String> memberClientIds) {
        Set<String> live = new TreeSet<>();
        for (String clientId : memberClientIds) {
            String processId = clientId.startsWith(applicationId + "-")
                    ? leadingProcessId(clientId.substring(applicationId.length() + 1)) : null;
            if (processId == null) {
                return Set.of();
            }
            live.add(processId);
        }
        if (live.isEmpty()) {
            return Set.of();
        }
        Set<String> dead = new TreeSet<>();
        for (String id : ongoingTransactionalIds) {
            String processId = processIdOfTransaction(applicationId, id);
            if (processId != null && !live.contains(processId)) {
                dead.add(id);
            }
        }
        return dead;
    }

    /** The process id of a stream thread's transactional id {@code <application id>-<process id>-<thread>}, or null. */
    private static String processIdOfTransaction(String applicationId, String transactionalId) {
        if (!transactionalId.startsWith(applicationId + "-")) {
            return null;
        }
        String rest = transactionalId.substring(applicationId.length() + 1);
        String processId = leadingProcessId(rest);
        return processId != null && rest.substring(processId.length()).matches("-\\d+") ? processId : null;
    }

    /** The process id (a UUID) that {@code text} starts with, or null. */
    private static String leadingProcessId(String text) {
        Matcher processId = PROCESS_ID.matcher(text);
        return processId.lookingAt() ? processId.group() : null;
    }

    @Override
    public void close() {
        worker.shutdownNow();
        try {
            worker.awaitTermination(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        admin.close(Duration.ofSeconds(1));
    }
}
