package io.turnstream.tools;

import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.DescribeConsumerGroupsOptions;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Why this executor was fenced. Either another executor started with the same instance id (it took the
 * transactional id and the static group membership: this one must stop), or the transaction coordinator aborted
 * a transaction of ours that outlived {@code transaction.timeout.ms}. Kafka bumps the producer epoch on that abort
 * ({@code TransactionCoordinator.abortTimedOutTransactions}), so the live producer sees the same
 * {@link ProducerFencedException} although nobody else has its transactional id; a broker that dies holds a
 * transaction open ~10 s, twice the executor's timeout (see {@link ToolExecutorClients#producer()} for why it stays
 * short). The group tells the two apart: an executor that took over joined with our {@code group.instance.id},
 * which then belongs to its member id, not ours; a {@code FencedInstanceIdException} says so directly.
 */
final class ProducerFencing {

    private static final Logger LOG = LoggerFactory.getLogger(ProducerFencing.class);
    /** The group coordinator may be failing over too: the admin client retries its lookup until this passes. */
    private static final long LOOKUP_TIMEOUT_MS = 30_000;

    enum Cause {
        /** Our transaction was aborted at its timeout and nobody else holds our identity: go on with a new producer. */
        TIMED_OUT_TRANSACTION,
        /** Another instance holds our instance id, or we cannot tell: stop. */
        ANOTHER_INSTANCE
    }

    /** Which member of the group holds a group instance id now. */
    interface Membership {
        /** The member id holding {@code groupInstanceId}, empty when no member does; throws when the group cannot be asked. */
        Optional<String> holderOf(String groupInstanceId) throws Exception;
    }

    private final String instanceId;
    private final Membership group;

    ProducerFencing(String instanceId, Membership group) {
        this.instanceId = instanceId;
        this.group = group;
    }

    /** Asks the consumer group {@code groupId} through an admin client of {@code clientProps}, each time it is needed (rarely). */
    static Membership ofGroup(Properties clientProps, String groupId) {
        return groupInstanceId -> {
            try (Admin admin = Admin.create(clientProps)) {
                ConsumerGroupDescription description = admin.describeConsumerGroups(List.of(groupId),
                        new DescribeConsumerGroupsOptions().timeoutMs((int) LOOKUP_TIMEOUT_MS)).describedGroups().get(groupId)
                        .get(LOOKUP_TIMEOUT_MS, TimeUnit.MILLISECONDS);
                return description.members().stream()
                        .filter(member -> member.groupInstanceId().filter(groupInstanceId::equals).isPresent())
                        .map(MemberDescription::consumerId).findFirst();
            } catch (ExecutionException e) {
                throw e.getCause() instanceof Exception cause ? cause : e;
            }
        };
    }

    /**
     * The cause of {@code fenced}: {@link Cause#TIMED_OUT_TRANSACTION} only for a fenced producer while the group
     * still gives our instance id to {@code ownMemberId} (the consumer's member id); anything else, including a
     * failed lookup, is {@link Cause#ANOTHER_INSTANCE}, the safe side.
     */
    Cause causeOf(KafkaException fenced, String ownMemberId) {
        if (!(fenced instanceof ProducerFencedException)) {
            return Cause.ANOTHER_INSTANCE;
        }
        Optional<String> holder;
        try {
            holder = group.holderOf(instanceId);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Cause.ANOTHER_INSTANCE;
        } catch (Exception e) {
            LOG.warn("the producer of tool executor {} was fenced and the group cannot tell whether another instance took "
                    + "over ({}); stopping to be safe", instanceId, e.toString());
            return Cause.ANOTHER_INSTANCE;
        }
        if (!ownMemberId.isEmpty() && holder.filter(ownMemberId::equals).isPresent()) {
            return Cause.TIMED_OUT_TRANSACTION;
        }
        LOG.info("the group gives instance id {} to {}, not to this executor's member {}", instanceId,
                holder.map(id -> "member " + id).orElse("no member"), ownMemberId.isEmpty() ? "(none)" : ownMemberId);
        return Cause.ANOTHER_INSTANCE;
    }
}
