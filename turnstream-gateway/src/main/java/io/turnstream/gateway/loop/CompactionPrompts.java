package io.turnstream.gateway.loop;

/**
 * The words of compaction, shared by the gateway and the simulated provider (which recognises a
 * summarisation request by them): the request that asks the model for a summary of the
 * conversation, and the message that carries the summary in place of the conversation afterwards.
 */
public final class CompactionPrompts {

    /** Sent after the part of the conversation to summarise, with the turn's system prompt and tools. */
    public static final String SUMMARISE = """
            Summarise the conversation above so that the work can go on from your summary alone: it \
            will replace those messages, which will no longer be available. Do not call any tools. \
            Answer with the summary only, in plain text, covering:
            1. The user's requests and intent, quoting their exact words where the wording matters.
            2. What was done: each tool call that mattered and what it showed, with the file paths, \
            names and values needed later.
            3. Decisions taken, errors met and how they were resolved.
            4. Where the work stands: what is finished, what remains, and the immediate next step.""";

    /** Opens the user message that stands for the summarised conversation. */
    public static final String SUMMARY_INTRO = "The conversation so far was compacted to stay within the context "
            + "window. This summary of it replaces the earlier messages:\n\n";

    /** Closes it: the model goes on with the turn. */
    public static final String SUMMARY_OUTRO = "\n\nContinue the work from where it stands.";

    private CompactionPrompts() {
    }

    /** The user message standing for the summarised conversation. */
    public static String summaryMessage(String summary) {
        return SUMMARY_INTRO + summary + SUMMARY_OUTRO;
    }
}
