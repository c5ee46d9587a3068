package io.turnstream.tools;

import org.apache.kafka.common.TopicPartition;

/** Where a tool call was read from: its result commits that offset, and its partition owns it. */
record RecordPosition(TopicPartition partition, long offset) {
}
