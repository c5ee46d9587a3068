package io.turnstream.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.runtime.Settings;
import java.util.Properties;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.junit.jupiter.api.Test;

class ToolExecutorClientsTest {

    private static ToolExecutorClients clients(String... pairs) {
        Properties props = new Properties();
        props.setProperty(ToolExecutorConfig.WORKSPACE, "/tmp/ws");
        for (int i = 0; i < pairs.length; i += 2) {
            props.setProperty(pairs[i], pairs[i + 1]);
        }
        Settings settings = Settings.of(props);
        return new ToolExecutorClients(settings, ToolExecutorConfig.from(settings));
    }

    @Test
    void aDeadExecutorsOpenTransactionIsAbortedAfterFiveSecondsUnlessConfiguredOtherwise() {
        // the instance taking its partitions cannot fence it (another transactional id): only the timeout ends it
        assertThat(clients().producer().getProperty(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG)).isEqualTo("5000");
        assertThat(clients(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "20000").producer()
                .getProperty(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG)).isEqualTo("20000");
    }
}
