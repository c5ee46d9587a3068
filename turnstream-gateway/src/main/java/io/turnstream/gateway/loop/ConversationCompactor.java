package io.turnstream.gateway.loop;

import io.turnstream.gateway.provider.CancelSignal;
import io.turnstream.gateway.provider.Conversation;
import io.turnstream.gateway.provider.ErrorCodes;
import io.turnstream.gateway.provider.ModelRequest;
import io.turnstream.gateway.provider.ModelCaller;
import io.turnstream.gateway.provider.StepItems;
import io.turnstream.gateway.provider.StepOutcome;
import io.turnstream.model.ErrorInfo;
import io.turnstream.model.ItemType;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamPayload;
import java.util.ArrayList;
import java.util.List;

/**
 * Compacts a conversation with a model call, as the design documents' compaction does: the latest
 * steps are kept word for word, everything before them is sent to the same model with a request to
 * summarise it ({@link CompactionPrompts#SUMMARISE}), and the conversation goes on as
 * [summary, latest steps] under the same system prompt. The split never separates a tool call from
 * its result: what is kept starts at an assistant step (with its tool results after it), so the
 * summary, a user message, is followed by the assistant as every protocol expects.
 */
final class ConversationCompactor {

    /**
     * Tool outputs are clipped to this many characters in the summarisation request: they are
     * usually what filled the window, and the summary needs their gist, not every byte.
     */
    static final int SUMMARISED_TOOL_OUTPUT_CHARS = 4_000;

    /**
     * What a compaction produced.
     *
     * @param outcome the summarisation call's outcome (its usage is the compaction's cost)
     * @param summary the summary, or null when the compaction failed
     * @param conversation the conversation to go on with: compacted, or unchanged when it failed
     * @param summarised how many entries of the conversation the summary replaced
     */
    record Result(StepOutcome outcome, String summary, List<Conversation.Entry> conversation, int summarised) {

        boolean succeeded() {
            return summary != null;
        }

        boolean aborted() {
            return outcome.status() == ResponseStatus.ABORTED;
        }

        /** Why the compaction failed. */
        ErrorInfo error() {
            return outcome.error() != null ? outcome.error()
                    : ErrorInfo.of(ErrorCodes.COMPACTION_FAILED, "the model answered the summarisation request without text");
        }
    }

    private final ModelCaller client;
    private final LoopConfig config;

    ConversationCompactor(ModelCaller client, LoopConfig config) {
        this.client = client;
        this.config = config;
    }

    /**
     * @param idPrefix names the summarisation call's items; they are read here and never published
     */
    Result compact(AgentLoop.Turn turn, String model, List<Conversation.Entry> entries, CancelSignal cancel,
                   String idPrefix) {
        int split = splitPoint(entries, config.compaction().keepRecentTokens());
        List<Conversation.Entry> request = new ArrayList<>();
        entries.subList(0, split).forEach(entry -> request.add(clipped(entry)));
        request.add(new Conversation.UserText(CompactionPrompts.SUMMARISE));
        SummaryText summary = new SummaryText();
        StepOutcome outcome = client.call(turn.provider().adapter(), turn.provider().endpoint(),
                new ModelRequest(model, turn.system(), request, turn.tools(), config.maxTokens(), config.thinkingBudget()),
                new StepItems(idPrefix, turn.provider().name(), summary), cancel);
        String text = outcome.status() == ResponseStatus.COMPLETE ? summary.text() : null;
        if (text == null) {
            return new Result(outcome, null, entries, 0);
        }
        List<Conversation.Entry> compacted = new ArrayList<>();
        compacted.add(new Conversation.UserText(CompactionPrompts.summaryMessage(text)));
        compacted.addAll(entries.subList(split, entries.size()));
        return new Result(outcome, text, List.copyOf(compacted), split);
    }

    /**
     * Where the kept part starts: the earliest assistant step (never the first entry) from which the
     * rest is at most {@code keepRecentTokens} and at most half of the conversation; the end when no
     * step qualifies, so that everything is summarised.
     */
    static int splitPoint(List<Conversation.Entry> entries, long keepRecentTokens) {
        long total = entries.stream().mapToLong(ConversationCompactor::estimatedTokens).sum();
        long budget = Math.min(keepRecentTokens, total / 2);
        int split = entries.size();
        long kept = 0;
        for (int i = entries.size() - 1; i >= 1; i--) {
            kept += estimatedTokens(entries.get(i));
            if (kept > budget) {
                break;
            }
            if (entries.get(i) instanceof Conversation.AssistantNative || entries.get(i) instanceof Conversation.AssistantText
                    || entries.get(i) instanceof Conversation.AssistantToolCalls) {
                split = i;
            }
        }
        return split;
    }

    /** A quarter of the characters, as the topology estimates tokens. */
    static long estimatedTokens(Conversation.Entry entry) {
        long chars;
        if (entry instanceof Conversation.UserText user) {
            chars = user.text().length();
        } else if (entry instanceof Conversation.AssistantText assistant) {
            chars = assistant.text().length();
        } else if (entry instanceof Conversation.AssistantNative step) {
            chars = step.content().toString().length();
        } else if (entry instanceof Conversation.AssistantToolCalls calls) {
            chars = (calls.text() == null ? 0 : calls.text().length()) + calls.calls().toString().length();
        } else {
            chars = ((Conversation.ToolOutputs) entry).outputs().stream().mapToLong(o -> o.text().length()).sum();
        }
        return (chars + 3) / 4;
    }

    private static Conversation.Entry clipped(Conversation.Entry entry) {
        if (!(entry instanceof Conversation.ToolOutputs results)) {
            return entry;
        }
        return new Conversation.ToolOutputs(results.outputs().stream().map(output -> {
            String text = output.text();
            if (text.length() <= SUMMARISED_TOOL_OUTPUT_CHARS) {
                return output;
            }
            return new Conversation.ToolOutput(output.callId(), output.toolName(),
                    text.substring(0, SUMMARISED_TOOL_OUTPUT_CHARS) + "\n[" + (text.length() - SUMMARISED_TOOL_OUTPUT_CHARS)
                            + " more characters left out]", output.success());
        }).toList());
    }

    /** The text of the summarisation call's messages (its reasoning and any tool call left out). */
    private static final class SummaryText implements StepItems.Sink {
        private final StringBuilder text = new StringBuilder();

        @Override
        public void emit(StreamPayload payload) {
            if (payload instanceof StreamPayload.ItemDone done && done.finalItem() != null
                    && done.finalItem().knownType() == ItemType.MESSAGE && done.finalItem().content() != null) {
                text.append(text.length() == 0 ? "" : "\n\n").append(done.finalItem().content());
            }
        }

        String text() {
            String summary = text.toString().strip();
            return summary.isEmpty() ? null : summary;
        }
    }
}
