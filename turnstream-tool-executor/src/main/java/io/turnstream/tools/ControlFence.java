package io.turnstream.tools;

import java.util.Map;
import org.apache.kafka.common.TopicPartition;

/**
 * How far the cancel listener must have read {@code llm.control} before a call may start: the end offset of each of its
 * partitions, taken (read_uncommitted, the high watermark) right after the poll that read the call. A cancel written
 * before the call was read lies below these ends, so once the listener has handed over every record below them, such a
 * cancel has reached the scheduler and the call is aborted unrun, whatever the listener's lag. Every partition, not only
 * the turn's: a client of another partitioner (librdkafka's hashes keys with CRC32, not murmur2) may write a turn's cancel
 * to another partition than Java's would.
 *
 * @param ends offset past which every record counts, per partition; empty: nothing to wait for
 */
record ControlFence(Map<TopicPartition, Long> ends) {

    static final ControlFence NONE = new ControlFence(Map.of());

    ControlFence {
        ends = Map.copyOf(ends);
    }

    /** Whether a reader at these positions (the next offset it hands over, per partition) has handed over every record below the ends. */
    boolean reachedBy(Map<TopicPartition, Long> read) {
        for (Map.Entry<TopicPartition, Long> end : ends.entrySet()) {
            Long position = read.get(end.getKey());
            if (end.getValue() > 0 && (position == null || position < end.getValue())) {
                return false;
            }
        }
        return true;
    }
}
