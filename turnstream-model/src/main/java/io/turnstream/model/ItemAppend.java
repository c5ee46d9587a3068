package io.turnstream.model;

/**
 * New text of one streaming item on {@code llm.item-appends}, keyed by turn id. {@code offset} is
 * the item's content length in code points before {@code text}; {@code seq} counts 1, 2, 3, ... per
 * turn on this topic. A client keeps the latest upsert's content per item and applies an append only
 * when {@code offset} equals the length it shows.
 */
public record ItemAppend(String turnId, String itemId, long seq, long offset, String text, long timestamp) {
}
