package io.turnstream.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.junit.jupiter.api.Test;

/** The failover defaults every group member and transactional producer starts from (docs/runtime.md, "Failover"). */
class FailoverDefaultsTest {

    /** {@code broker.session.timeout.ms}'s default: how long the controllers wait before they fence a dead broker. */
    private static final int BROKER_SESSION_TIMEOUT_MS = 9000;

    @Test
    void aSurvivorHearsOfADeadMembersExpiredSessionWithinHalfASecond() {
        Properties member = new Properties();
        FailoverDefaults.groupMember(member);

        int session = Integer.parseInt(member.getProperty(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG));
        int heartbeat = Integer.parseInt(member.getProperty(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG));
        assertThat(session).as("the floor of the broker's default group.min.session.timeout.ms").isEqualTo(6000);
        assertThat(heartbeat).as("from a SIGKILL to the survivor's rejoin: the session timeout +/- one heartbeat")
                .isEqualTo(500);
        assertThat(heartbeat).as("Kafka asks for at most a third of the session timeout").isLessThanOrEqualTo(session / 3);
    }

    @Test
    void whereTheBrokersAllowItMembersAreTakenForDeadAfterThreeSeconds() {
        assertThat(FailoverDefaults.sessionTimeoutAllowed(3000, 1_800_000)).as("Turnstream's brokers").isEqualTo(3000);
        assertThat(FailoverDefaults.sessionTimeoutAllowed(1000, 1_800_000)).as("no lower where more is allowed")
                .isEqualTo(3000);
        assertThat(FailoverDefaults.sessionTimeoutAllowed(6000, 1_800_000)).as("Kafka's default brokers")
                .isEqualTo(6000);
        assertThat(FailoverDefaults.sessionTimeoutAllowed(1000, 2000)).as("within the brokers' maximum")
                .isEqualTo(2000);
        assertThat(Integer.parseInt(FailoverDefaults.HEARTBEAT_INTERVAL_MS))
                .as("Kafka asks for at most a third of the session timeout")
                .isLessThanOrEqualTo(FailoverDefaults.PREFERRED_SESSION_TIMEOUT_MS / 3);
    }

    @Test
    void aUsersSettingsWinAndTheNewGroupProtocolsGetNone() {
        Properties mine = new Properties();
        mine.setProperty(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "15000");
        mine.setProperty(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "5000");
        FailoverDefaults.groupMember(mine);
        assertThat(mine.getProperty(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG)).isEqualTo("15000");
        assertThat(mine.getProperty(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG)).isEqualTo("5000");

        Properties kip848 = new Properties();
        kip848.setProperty(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
        FailoverDefaults.groupMember(kip848);
        assertThat(kip848).doesNotContainKeys(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG,
                ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG);
    }

    /**
     * A gateway's transaction open while a broker dies waits for the controllers to fence that broker (9 s) and for
     * new leaders; the cluster run saw it still open 11.3 s after it began. Aborted at its timeout, the coordinator
     * bumps the producer's epoch, and the live owner takes its own partition over again, calling the model again for
     * every turn streaming there (10 s did that once).
     */
    @Test
    void aGatewaysTransactionOutlastsABrokersFailover() {
        Properties fenced = new Properties();
        FailoverDefaults.fencedTransactionalProducer(fenced);

        assertThat(Integer.parseInt(fenced.getProperty(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG)))
                .as("more than twice the broker's fencing").isGreaterThan(2 * BROKER_SESSION_TIMEOUT_MS);
    }
}
