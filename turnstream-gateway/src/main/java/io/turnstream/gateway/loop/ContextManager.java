package io.turnstream.gateway.loop;

import io.turnstream.gateway.loop.GatewayMetrics.Counter;
import io.turnstream.gateway.provider.CancelSignal;
import io.turnstream.gateway.provider.Conversation;
import io.turnstream.gateway.provider.ErrorCodes;
import io.turnstream.gateway.provider.StepOutcome;
import io.turnstream.model.ErrorInfo;
import io.turnstream.model.ItemType;
import io.turnstream.model.Origins;
import io.turnstream.model.OutputItem;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.StreamPayload.Usage;
import java.time.Clock;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps one turn's conversation within its model's context window, as the agent loop of the design
 * documents does. A step that filled the window past the threshold (its prompt, cached input
 * included, plus its output) has the conversation compacted before the next model call; a call the
 * provider refuses because its prompt is too long has it compacted, and is made once more. A call
 * still too long after a compaction fails the step with {@code CONTEXT_OVERFLOW}.
 *
 * <p>A compaction is seen on the turn's stream as a {@code compacting} turn status (context used,
 * window), then a {@code message} item of origin {@code compaction} (id {@code {runId}-s{step}-compaction-{millis}})
 * holding the summary, then {@code running} when the model is called again.
 */
final class ContextManager {

    private static final Logger LOG = LoggerFactory.getLogger(ContextManager.class);

    private final AgentLoop.Turn turn;
    private final CompactionConfig config;
    private final ConversationCompactor compactor;
    private final TurnStatusReporter status;
    /** Publishes payloads so that they commit together. */
    private final Consumer<List<StreamPayload>> publish;
    private final CancelSignal cancel;
    private final BiConsumer<String, Usage> usage;
    private final GatewayMetrics metrics;
    private final Clock clock;
    /** The context the last step filled, or null when unknown (no step yet, no usage, or compacted since). */
    private Long lastUsed;

    /** @param usage receives what each summarisation call used, with the model that served it */
    ContextManager(AgentLoop.Turn turn, LoopConfig config, ConversationCompactor compactor,
                   TurnStatusReporter status, Consumer<List<StreamPayload>> publish, CancelSignal cancel,
                   BiConsumer<String, Usage> usage, GatewayMetrics metrics, Clock clock) {
        this.turn = turn;
        this.config = config.compaction();
        this.compactor = compactor;
        this.status = status;
        this.publish = publish;
        this.cancel = cancel;
        this.usage = usage;
        this.metrics = metrics;
        this.clock = clock;
    }

    /**
     * Makes a step's model call on the conversation, compacting it first or after an overflow.
     *
     * @param model the model the call goes to now
     * @param modelCall makes the call on the conversation's entries
     */
    StepOutcome call(int step, Conversation conversation, Supplier<String> model,
                     Function<List<Conversation.Entry>, StepOutcome> modelCall) {
        boolean compacted = false;
        if (lastUsed != null && config.nearlyFull(model.get(), lastUsed)) {
            ConversationCompactor.Result result = compact(step, conversation, model.get(), lastUsed);
            if (result.aborted()) {
                return StepOutcome.abortedBeforeStream();
            }
            compacted = result.succeeded();
        }
        StepOutcome outcome = modelCall.apply(conversation.entries());
        if (ContextWindows.overflowed(outcome)) {
            if (compacted) {
                return tooLong(outcome, model.get(), "even after compacting it");
            }
            ConversationCompactor.Result result = compact(step, conversation, model.get(),
                    config.windows().overflowTokens(model.get(), outcome.error()));
            if (result.aborted()) {
                return StepOutcome.abortedBeforeStream();
            }
            if (!result.succeeded()) {
                return tooLong(outcome, model.get(), "and compacting it failed (" + result.error().code() + ": "
                        + result.error().message() + ")");
            }
            outcome = modelCall.apply(conversation.entries());
            if (ContextWindows.overflowed(outcome)) {
                return tooLong(outcome, model.get(), "even after compacting it");
            }
        }
        lastUsed = outcome.status() == ResponseStatus.COMPLETE && outcome.usage() != null
                ? ContextWindows.used(outcome.usage()) : null;
        return outcome;
    }

    private ConversationCompactor.Result compact(int step, Conversation conversation, String model, long used) {
        long window = config.windows().of(model);
        LOG.info("step {}: the context holds {} of {} tokens for model {}; compacting the conversation", step, used,
                window, model);
        status.compacting(used, window);
        ConversationCompactor.Result result = compactor.compact(turn, model, conversation.entries(), cancel,
                turn.runId() + "-s" + step + "-summary");
        usage.accept(model, result.outcome().usage());
        if (result.succeeded()) {
            metrics.increment(Counter.COMPACTIONS);
            conversation.replace(result.conversation());
            lastUsed = null;
            // the time keeps the id unique when a gateway that takes the turn over compacts the same step again
            publishSummary(turn.runId() + "-s" + step + "-compaction-" + clock.millis(), result.summary());
            LOG.info("step {}: {} entries of the conversation summarised; {} kept", step, result.summarised(),
                    result.conversation().size() - 1);
        } else if (!result.aborted()) {
            LOG.warn("step {}: compacting the conversation failed: {}: {}", step, result.error().code(),
                    result.error().message());
        }
        return result;
    }

    private void publishSummary(String id, String summary) {
        // together: a gateway that takes the turn over names its own summary, so a half-published one would stay open
        publish.accept(List.of(
                new StreamPayload.ItemStart(id, ItemType.MESSAGE, null, null, null, null, Origins.COMPACTION),
                new StreamPayload.ItemDone(id, new OutputItem(id, ItemType.MESSAGE, summary, Origins.COMPACTION,
                        null, null, null, null, null, turn.provider().name()))));
    }

    private StepOutcome tooLong(StepOutcome outcome, String model, String why) {
        ErrorInfo error = ErrorInfo.of(ErrorCodes.CONTEXT_OVERFLOW, "the conversation does not fit the context window of "
                + model + " (" + config.windows().of(model) + " tokens) " + why + ": " + outcome.error().message());
        LOG.warn("{}", error.message());
        return StepOutcome.refused(error, false, false, null, outcome.itemsPublished());
    }
}
