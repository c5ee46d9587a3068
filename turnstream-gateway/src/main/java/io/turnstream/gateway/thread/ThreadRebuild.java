package io.turnstream.gateway.thread;

import io.turnstream.gateway.turn.TurnRequest;
import io.turnstream.model.TurnRequestRecord;
import java.util.Optional;

/** What the turn runner needs of threads: a request with its thread's conversation before it ({@link ThreadHistory}). */
@FunctionalInterface
public interface ThreadRebuild {

    /**
     * The request with its thread's conversation before it, when it continues its thread, and the earlier turns it
     * names replaced by their steps; else as it is.
     *
     * @param offset the request's offset on {@code llm.turn-requests}: the turns requested before it are its past
     * @param before the thread's turn that ran on this gateway just before it, if any
     * @throws io.turnstream.schema.SchemaRegistryException when the thread's history cannot be read for now (on Avro,
     *                                                      a schema registry that cannot be reached)
     */
    TurnRequest rebuild(TurnRequestRecord record, TurnRequest request, long offset, Optional<String> before);
}
