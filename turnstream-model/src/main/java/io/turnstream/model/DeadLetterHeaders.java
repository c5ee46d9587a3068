package io.turnstream.model;

/**
 * Headers of every dead-lettered record, whichever service wrote it: the record keeps its original
 * key and bytes, and these say why and where it came from.
 */
public final class DeadLetterHeaders {

    /** Why the record could not be used, in words. */
    public static final String REASON = "turnstream.dlq.reason";
    /** Where it was read: {@code topic-partition@offset}. */
    public static final String SOURCE = "turnstream.dlq.source";

    private DeadLetterHeaders() {
    }
}
