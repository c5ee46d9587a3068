package io.turnstream.testkit;

import io.turnstream.model.ChangeType;
import io.turnstream.model.Json;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UiItemType;
import io.turnstream.model.UiPayloadType;
import io.turnstream.model.UpsertEnvelope;
import java.util.List;
import java.util.Objects;
import org.assertj.core.api.AbstractAssert;

/**
 * AssertJ assertions on a {@link TurnView}, named after what a UI shows:
 *
 * <pre>{@code
 * TurnAssert.assertThat(driver.turn("turn-1"))
 *         .isCompleted()
 *         .hasMessage("msg-1", "Hello, world")
 *         .hasToolCall("read_file", "{\"path\":\"README.md\"}")
 *         .hasConsistentSequence();
 * }</pre>
 *
 * A failure message shows the whole turn as the assertions saw it.
 */
public final class TurnAssert extends AbstractAssert<TurnAssert, TurnView> {

    private TurnAssert(TurnView actual) {
        super(actual, TurnAssert.class);
    }

    public static TurnAssert assertThat(TurnView turn) {
        return new TurnAssert(turn);
    }

    public TurnAssert hasStarted() {
        isNotNull();
        if (actual.lifecycle().stream().noneMatch(e -> e.type() == UiPayloadType.TURN_STARTED)) {
            failWithMessage("expected turn %s to have started, but it has no turn_started:%n%s", actual.turnId(), actual);
        }
        return this;
    }

    /** {@code turn_completed} with status {@code complete}. */
    public TurnAssert isCompleted() {
        return endsWith(UiPayloadType.TURN_COMPLETED, ResponseStatus.COMPLETE);
    }

    /** {@code turn_error} with this error code (e.g. {@code TURN_TIMEOUT}, or the provider's). */
    public TurnAssert failedWith(String errorCode) {
        endsWith(UiPayloadType.TURN_ERROR, null);
        UITurnEvent end = actual.end().orElseThrow();
        if (end.error() == null || !errorCode.equals(end.error().code())) {
            failWithMessage("expected turn %s to fail with %s, but it failed with %s:%n%s", actual.turnId(), errorCode,
                    end.error() == null ? "no error" : end.error().code(), actual);
        }
        return this;
    }

    /** The turn has not closed (no {@code turn_completed} or {@code turn_error} yet). */
    public TurnAssert isOpen() {
        isNotNull();
        actual.end().ifPresent(end -> failWithMessage("expected turn %s to be open, but it ended with %s:%n%s",
                actual.turnId(), end.type(), actual));
        return this;
    }

    /** A completed message item with exactly this content. */
    public TurnAssert hasMessage(String itemId, String content) {
        UIUpsert item = completedItem(itemId);
        if (!Objects.equals(item.content(), content)) {
            failWithMessage("expected message %s of turn %s to read%n  \"%s\"%nbut it reads%n  \"%s\"", itemId,
                    actual.turnId(), content, item.content());
        }
        return this;
    }

    /** A completed {@code tool_call} of this tool with these arguments (compared as JSON). */
    public TurnAssert hasToolCall(String toolName, String argumentsJson) {
        isNotNull();
        boolean found = actual.items().stream().anyMatch(item -> item.itemType() == UiItemType.TOOL_CALL
                && item.changeType() == ChangeType.COMPLETED && toolName.equals(item.toolName())
                && Json.parseOrText(argumentsJson).equals(Json.parseOrText(item.toolArguments())));
        if (!found) {
            failWithMessage("expected turn %s to have a completed tool_call %s %s:%n%s", actual.turnId(), toolName,
                    argumentsJson, actual);
        }
        return this;
    }

    /** The item's live text, rebuilt from {@code llm.item-appends} alone, equals its final upsert's content. */
    public TurnAssert hasLiveTextMatchingFinalContent(String itemId) {
        UIUpsert item = completedItem(itemId);
        if (!actual.liveText(itemId).equals(item.content())) {
            failWithMessage("expected the appends of %s to rebuild%n  \"%s\"%nbut they rebuild%n  \"%s\"", itemId,
                    item.content(), actual.liveText(itemId));
        }
        return this;
    }

    /** {@code seq} counts 1, 2, 3, ... over the turn's envelopes, and each item's {@code version} 1, 2, 3, ... */
    public TurnAssert hasConsistentSequence() {
        isNotNull();
        List<UpsertEnvelope> envelopes = actual.envelopes();
        for (int i = 0; i < envelopes.size(); i++) {
            if (envelopes.get(i).seq() != i + 1) {
                failWithMessage("expected seq %s at position %s of turn %s, got %s", i + 1, i, actual.turnId(),
                        envelopes.get(i).seq());
            }
        }
        actual.items().forEach(item -> {
            long upserts = envelopes.stream().filter(e -> e.payload() instanceof UIUpsert u && u.itemId().equals(item.itemId()))
                    .count();
            if (item.version() != upserts) {
                failWithMessage("expected item %s at version %s after %s upserts, got version %s", item.itemId(), upserts,
                        upserts, item.version());
            }
        });
        return this;
    }

    /** How many records the turn took on {@code llm.upserts}: the batching a UI pays for. */
    public TurnAssert hasAtMostEnvelopes(int most) {
        isNotNull();
        if (actual.envelopes().size() > most) {
            failWithMessage("expected at most %s envelopes for turn %s, got %s:%n%s", most, actual.turnId(),
                    actual.envelopes().size(), actual);
        }
        return this;
    }

    private TurnAssert endsWith(UiPayloadType type, ResponseStatus status) {
        isNotNull();
        UITurnEvent end = actual.end().orElse(null);
        if (end == null || end.type() != type || (status != null && status != end.status())) {
            failWithMessage("expected turn %s to end with %s%s, but it %s:%n%s", actual.turnId(), type,
                    status == null ? "" : " " + status, end == null ? "has not ended" : "ended with " + end.type()
                            + (end.status() == null ? "" : " " + end.status()), actual);
        }
        return this;
    }

    private UIUpsert completedItem(String itemId) {
        isNotNull();
        UIUpsert item = actual.item(itemId).orElse(null);
        if (item == null) {
            failWithMessage("expected turn %s to have item %s:%n%s", actual.turnId(), itemId, actual);
        } else if (item.changeType() != ChangeType.COMPLETED) {
            failWithMessage("expected item %s of turn %s to be completed, but its latest upsert is %s v%s:%n%s", itemId,
                    actual.turnId(), item.changeType(), item.version(), actual);
        }
        return item;
    }
}
