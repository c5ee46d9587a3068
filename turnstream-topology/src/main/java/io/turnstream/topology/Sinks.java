package io.turnstream.topology;

import org.apache.kafka.streams.processor.api.Record;

/**
 * Where the turn logic's records go, by sink name ({@link UpsertTopology}): the processor forwards
 * them to the topology's sinks, a test of {@link TurnMachine} collects them.
 */
@FunctionalInterface
interface Sinks {

    void send(String sink, Record<String, byte[]> record);
}
