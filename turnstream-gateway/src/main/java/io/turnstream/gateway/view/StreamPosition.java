package io.turnstream.gateway.view;

import io.turnstream.gateway.http.ApiError;

/**
 * Where a client is in a turn's live view: the seq of the last upsert and of the last append it has.
 * It is the SSE event id, {@code U.A}; Kafka assigns both seqs, so the id means the same on every
 * gateway instance and a reconnect with {@code Last-Event-ID} resumes exactly, wherever it lands.
 */
public record StreamPosition(long upsertSeq, long appendSeq) {

    public static final StreamPosition START = new StreamPosition(0, 0);

    public StreamPosition {
        if (upsertSeq < 0 || appendSeq < 0) {
            throw new IllegalArgumentException("seqs are not negative");
        }
    }

    /** This position after the client has received {@code event}. */
    StreamPosition after(LiveEvent event) {
        return event instanceof LiveEvent.Upsert
                ? new StreamPosition(Math.max(upsertSeq, event.seq()), appendSeq)
                : new StreamPosition(upsertSeq, Math.max(appendSeq, event.seq()));
    }

    /** True when the client already has {@code event}. */
    boolean covers(LiveEvent event) {
        return event.seq() <= (event instanceof LiveEvent.Upsert ? upsertSeq : appendSeq);
    }

    public String eventId() {
        return upsertSeq + "." + appendSeq;
    }

    /**
     * Parses an event id: {@code U.A}, or a bare {@code U} (an upsert seq, as ids were before appends
     * joined the stream) meaning {@code U.0}.
     */
    public static StreamPosition parse(String eventId) {
        String[] parts = eventId.strip().split("\\.", -1);
        try {
            if (parts.length > 2) {
                throw new NumberFormatException();
            }
            return new StreamPosition(Long.parseLong(parts[0]), parts.length == 2 ? Long.parseLong(parts[1]) : 0);
        } catch (IllegalArgumentException e) {
            throw ApiError.badRequest("Last-Event-ID must be the id of the last event received (U.A: the seqs of the "
                    + "last upsert and the last append), got '" + eventId + "'");
        }
    }
}
