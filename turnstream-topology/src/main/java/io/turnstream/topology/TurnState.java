package io.turnstream.topology;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.UiItemType;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * What the topology remembers of one turn, keyed by run id in the {@code turns} store. Written when
 * the turn starts, when it emits (the sequence advances) and when it closes; never per delta.
 * A closed turn shrinks to a marker until {@link #forgetAtMs}, so late events for it are recognised.
 */
final class TurnState {

    String runId;
    String turnId;
    String threadId;
    String modelId;
    String providerId;
    /** From {@code response_start}; carried on turn events and tool calls. Null for a turn of no tenant. */
    String tenantId;
    /** The gateway's signature of the tenant ({@link io.turnstream.runtime.TenantClaims}), passed on with the tool calls; null without one. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    String tenantClaim;
    /** The W3C trace context of the turn, copied to the headers of what it emits (see {@link TurnTrace}); null without one. */
    String traceparent;
    String tracestate;
    /** The last {@code seq} emitted for this turn; the next record gets {@code seq + 1}. */
    long seq;
    /** The last {@code seq} on {@code llm.item-appends}, a sequence of its own. */
    long appendSeq;
    long idleDueMs;
    /**
     * Wall-clock time of the turn's last event, in memory only ({@code transient}: not stored), so an
     * event writes nothing: the idle deadline, armed once, is pushed back to "last event + timeout" when
     * it falls due after a later event. 0 on an object read from the store (after a restore, or once
     * the cache let it go): the turn gets a full idle period from then.
     */
    transient long lastEventMs;
    /**
     * How many of the turn's items are open (in the {@code items} store), in memory only, or {@link #UNCOUNTED} on an
     * object read from the store (after a restore, or once the cache let it go), where only a scan can tell. A
     * turn whose items all finished then closes without a scan of the store, which writes every pending state
     * change first: profiled, that scan per closing turn was 2.2% of the flood's stream thread, and its writes
     * were the commit's, done once per turn instead of once per commit.
     */
    transient int openItems = UNCOUNTED;
    boolean closed;
    long forgetAtMs;
    /**
     * The usage its {@code step_completed} statuses reported, summed: all a turn closed by its idle timeout (its
     * gateway's end never came) can say it used. Null until a step completed.
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    StreamPayload.Usage stepsUsage;
    /** Items that finished (done, errored or cancelled), so a repeated or late event for one is named as such. */
    Set<String> finishedItems = new LinkedHashSet<>();
    /** Tool-status keys the turn wrote on {@code llm.item-state} (see {@link UpsertEmitter#itemStateKeys}), for their tombstones. */
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    Set<String> toolStatusKeys = new LinkedHashSet<>();

    /**
     * What a withdrawal needs of each finished item, by item id: its last upsert's version (the
     * {@code withdrawn} upsert gets the next), type and call id. Dropped when the item is withdrawn.
     */
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    Map<String, FinishedItem> withdrawable = new LinkedHashMap<>();

    /** A finished item that a later {@code item_withdrawn} may still take back. */
    static final class FinishedItem {
        UiItemType itemType;
        long version;
        String callId;

        FinishedItem() {
        }

        FinishedItem(UiItemType itemType, long version, String callId) {
            this.itemType = itemType;
            this.version = version;
            this.callId = callId;
        }
    }

    static final int UNCOUNTED = -1;

    /** An item of the turn was put in the store. */
    void itemOpened() {
        if (openItems != UNCOUNTED) {
            openItems++;
        }
    }

    /** An item of the turn was deleted from the store. */
    void itemFinished() {
        if (openItems > 0) {
            openItems--;
        }
    }

    /** Whether the turn is known to have no open item: no scan of the store needed to find them. */
    boolean hasNoOpenItems() {
        return openItems == 0;
    }

    long nextSeq() {
        return ++seq;
    }
}
