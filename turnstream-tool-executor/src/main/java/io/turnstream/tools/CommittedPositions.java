package io.turnstream.tools;

import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The group's committed offsets of the tool-call partitions: read (timeouts retried) and sought back to. */
final class CommittedPositions {

    private static final Logger LOG = LoggerFactory.getLogger(CommittedPositions.class);

    private final Consumer<String, byte[]> consumer;
    private final BooleanSupplier closing;

    CommittedPositions(Consumer<String, byte[]> consumer, BooleanSupplier closing) {
        this.consumer = consumer;
        this.closing = closing;
    }

    /** The committed offsets of those partitions that have one. */
    Map<TopicPartition, OffsetAndMetadata> of(Collection<TopicPartition> partitions) {
        while (true) {
            try {
                Map<TopicPartition, OffsetAndMetadata> committed = new HashMap<>(consumer.committed(new HashSet<>(partitions)));
                committed.values().removeIf(Objects::isNull);
                return committed;
            } catch (WakeupException resultReady) {
                // a wakeup meant for poll() landed here: ask again
            } catch (TimeoutException e) {
                if (closing.getAsBoolean()) {
                    throw e;
                }
                LOG.warn("cannot read the committed offsets, retrying: {}", e.getMessage());
            }
        }
    }

    /** Where reading starts again: the committed offset, or the beginning when none was committed. */
    void seekBack(Collection<TopicPartition> partitions) {
        Map<TopicPartition, OffsetAndMetadata> committed = of(partitions);
        for (TopicPartition partition : partitions) {
            OffsetAndMetadata offset = committed.get(partition);
            if (offset == null) {
                consumer.seekToBeginning(List.of(partition));
            } else {
                consumer.seek(partition, offset.offset());
            }
        }
    }
}
