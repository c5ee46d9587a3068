package io.turnstream.gateway.ownership;

import io.turnstream.model.TurnRequestRecord;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/** The ownership loop's view of its group consumer, and bounded reads of partitions for a takeover. */
final class ConsumerGroupLog implements OwnedPartitions.GroupLog {

    private final Consumer<String, byte[]> consumer;
    private final TurnResumer resumer;

    ConsumerGroupLog(Consumer<String, byte[]> consumer, TurnResumer resumer) {
        this.consumer = consumer;
        this.resumer = resumer;
    }

    @Override
    public long position(TopicPartition partition) {
        return consumer.position(partition);
    }

    @Override
    public ConsumerGroupMetadata groupMetadata() {
        return consumer.groupMetadata();
    }

    @Override
    public void seek(TopicPartition partition, long offset) {
        consumer.seek(partition, offset);
    }

    @Override
    public Map<TopicPartition, String> committedMetadata(Set<TopicPartition> partitions) {
        Map<TopicPartition, String> metadata = new HashMap<>();
        consumer.committed(partitions).forEach((partition, committed) ->
                metadata.put(partition, committed == null ? "" : committed.metadata()));
        partitions.forEach(partition -> metadata.putIfAbsent(partition, ""));
        return metadata;
    }

    @Override
    public void rewind(TopicPartition partition) {
        OffsetAndMetadata committed = consumer.committed(Set.of(partition)).get(partition);
        if (committed != null) {
            consumer.seek(partition, committed.offset());
        } else {
            consumer.seekToBeginning(List.of(partition));
        }
    }

    @Override
    public void pause(TopicPartition partition) {
        consumer.pause(List.of(partition));
    }

    @Override
    public void resume(TopicPartition partition) {
        consumer.resume(List.of(partition));
    }

    @Override
    public TurnResumer.PartitionsRead readToEnd(Map<TopicPartition, Long> from) {
        return resumer.readToEnd(from);
    }

    @Override
    public TurnResumer.TurnLog turnsOf(List<TurnRequestRecord> resumed) {
        return resumer.turnsOf(resumed);
    }
}
