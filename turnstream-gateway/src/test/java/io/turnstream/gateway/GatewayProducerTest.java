package io.turnstream.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.model.ControlMessage;
import io.turnstream.model.Topics;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.EmbeddedKafkaBroker;
import io.turnstream.runtime.TopicAdmin;
import io.turnstream.testsupport.UsesBroker;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** The gateway's producer on a real broker. */
@UsesBroker
class GatewayProducerTest {

    /**
     * The approval route stores a remembered allowance in a stage chained on the decision's send. Run on
     * Kafka's I/O thread, that send of a topic the producer has not written yet waits for metadata which only
     * that thread fetches, until {@code max.block.ms} (60 s), and fails: CI saw the route's 503 this way.
     */
    @Test
    void aSendChainedOnAnotherSendsCompletionIsStored() throws Exception {
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.onFreePort().start()) {
            Properties kafka = new Properties();
            kafka.put("bootstrap.servers", broker.bootstrapServers());
            TopicAdmin.createAll(kafka, Topics.DEFAULTS, 1, (short) 1);
            try (GatewayProducer producer = new GatewayProducer(kafka, Topics.DEFAULTS, WireFormat.JSON)) {
                ControlMessage approval = ControlMessage.approval("turn-1", "call-1", true, null, true);

                CompletableFuture<Void> stored = producer.control(approval)
                        .thenCompose(published -> producer.threadAllowance("tenant/thread/note", approval));

                stored.join();
                assertThat(producer.healthy()).isTrue();
            }
        }
    }
}
