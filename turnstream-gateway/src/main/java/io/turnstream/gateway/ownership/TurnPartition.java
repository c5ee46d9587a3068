package io.turnstream.gateway.ownership;

import io.turnstream.gateway.loop.TurnPublisher;
import io.turnstream.gateway.loop.TurnRegistry;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.runtime.TraceContext;

/**
 * What a turn needs of the owned partition of {@code llm.turn-requests} its request is on, while it
 * runs here: a writer in the partition's transactions, and a say in the partition's committed offset
 * (a turn that has not finished keeps its request to be read again by the next owner).
 */
public interface TurnPartition {

    /**
     * What Kafka holds of the turns the takeover of this partition resumes, read once for all of them when the first
     * asks.
     */
    TurnHistory history();

    /** The writer of one turn of this partition. */
    TurnPublisher publisherFor(TurnRequestRecord request, TraceContext trace);

    /** A turn of the request at {@code offset} runs here now. */
    void started(long offset, TurnRegistry.ActiveTurn turn);

    /** The turn stopped running here; unless it was handed over, its request need not be read again. */
    void stopped(long offset, String turnId, boolean handedOver);

    /**
     * The turn cannot run now for what it depends on, not for its records: on Avro, a schema registry that cannot be
     * reached while what Kafka holds of it is read. The partition is let go as when a commit fails (its turns stopped,
     * its open transaction aborted) and taken over again after a backoff, which resumes the turn; the turn stops here
     * handed over.
     */
    void cannotRunNow(String turnId, RuntimeException why);
}
