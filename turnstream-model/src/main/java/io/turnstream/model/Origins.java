package io.turnstream.model;

/**
 * The origins the contract names for messages. Origin is an open vocabulary: a producer may write
 * another, and the topology passes it through ({@code agent} when the item says none).
 */
public final class Origins {

    public static final String USER = "user";
    public static final String AGENT = "agent";
    /** A message holding the summary that replaced the conversation before it (context compaction). */
    public static final String COMPACTION = "compaction";

    private Origins() {
    }
}
