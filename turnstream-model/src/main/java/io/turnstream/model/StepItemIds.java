package io.turnstream.model;

import java.util.Objects;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The ids the gateway gives the items of a turn's model steps (the contract's "gateway's ids"), built and read back
 * in one place so that the gateway that names them and every reader that takes a step out of them agree:
 * <ul>
 * <li>{@code {runId}-s{step}}: the step's prefix; its items are {@code {runId}-s{step}-{n}}
 * ({@link Kind#ITEM}, {@code n} from 0);</li>
 * <li>{@code {runId}-s{step}-out{k}}: the output of the step's {@code k}-th call ({@link Kind#OUTPUT});</li>
 * <li>{@code {runId}-s{step}-{n}-out}: the output a call (item {@code n}) gets when its step failed or was
 * cancelled, never run ({@link Kind#ABANDONED_OUTPUT});</li>
 * <li>{@code {runId}-s{step}-compaction-{millis}}: a compaction's summary ({@link Kind#COMPACTION}), the time
 * keeping it unique when another gateway compacts the same step again;</li>
 * <li>{@code {runId}-s{step}-summary}: the prefix of the summarising call's items, never published, so never
 * read back.</li>
 * </ul>
 * A run id may hold anything, {@code -s1-} and digits too: an id is read from its end, since what follows
 * {@code -s{step}} in no form holds {@code -s} and a digit. Numbers are read only as the builders write them (no sign, no leading zero, in range), so every id
 * {@link #parse} accepts is the one a builder makes of its parts.
 */
public final class StepItemIds {

    /** The numbered forms of a step's ids; {@link Parsed#index()} is the number each carries. */
    public enum Kind {
        /** {@code {runId}-s{step}-{n}}: index {@code n}. */
        ITEM,
        /** {@code {runId}-s{step}-out{k}}: index {@code k}, the call's position in its step. */
        OUTPUT,
        /** {@code {runId}-s{step}-{n}-out}: index {@code n}, the call's item number. */
        ABANDONED_OUTPUT,
        /** {@code {runId}-s{step}-compaction-{millis}}: index {@code millis}. */
        COMPACTION
    }

    /** An id read back: {@code stepPrefix()} and the kind's index give it again. */
    public record Parsed(String runId, int step, Kind kind, long index) {

        /** {@code {runId}-s{step}}: what the items of one model step share. */
        public String stepPrefix() {
            return StepItemIds.stepPrefix(runId, step);
        }
    }

    private static final String NUMBER = "(0|[1-9][0-9]*)";
    // the greedy run id ends at the last "-s" and digit: the only one a whole form can follow
    private static final Pattern ID = Pattern.compile("(.+)-s" + NUMBER + "-(?:" + NUMBER + "|out" + NUMBER + "|"
            + NUMBER + "-out|compaction-" + NUMBER + ")", Pattern.DOTALL);

    private StepItemIds() {
    }

    /** {@code {runId}-s{step}}, step from 1. */
    public static String stepPrefix(String runId, int step) {
        if (Objects.requireNonNull(runId, "runId").isEmpty()) {
            throw new IllegalArgumentException("a step item id needs a run id");
        }
        if (step < 1) {
            throw new IllegalArgumentException("steps count from 1, not " + step);
        }
        return runId + "-s" + step;
    }

    /** {@code {prefix}-{n}}: item {@code n} of a step ({@link #stepPrefix}) or of the summarising call. */
    public static String item(String prefix, int n) {
        return prefix + "-" + index(n);
    }

    /** {@code {runId}-s{step}-out{k}}: the output of the step's {@code k}-th call (from 0). */
    public static String output(String runId, int step, int k) {
        return stepPrefix(runId, step) + "-out" + index(k);
    }

    /** {@code {callItemId}-out}: the output of a call whose step ended without running it. */
    public static String abandonedOutput(String callItemId) {
        return Objects.requireNonNull(callItemId, "callItemId") + "-out";
    }

    /** {@code {runId}-s{step}-compaction-{millis}}: the summary of a compaction made before the step's call. */
    public static String compaction(String runId, int step, long millis) {
        return stepPrefix(runId, step) + "-compaction-" + index(millis);
    }

    /** {@code {runId}-s{step}-summary}: the prefix of the summarising call's items, read by the compactor alone. */
    public static String summaryPrefix(String runId, int step) {
        return stepPrefix(runId, step) + "-summary";
    }

    /**
     * Reads an id of one of the numbered forms ({@link Kind}); empty for null, the prompt's id, a provider's
     * own id or anything else that is not exactly such an id.
     */
    public static Optional<Parsed> parse(String itemId) {
        if (itemId == null) {
            return Optional.empty();
        }
        Matcher id = ID.matcher(itemId);
        if (!id.matches()) {
            return Optional.empty();
        }
        for (Kind kind : Kind.values()) {
            String index = id.group(3 + kind.ordinal()); // the pattern's forms are in Kind's order
            if (index != null) {
                return parsed(id.group(1), id.group(2), kind, index);
            }
        }
        throw new IllegalStateException("the pattern matched no form: " + itemId);
    }

    private static Optional<Parsed> parsed(String runId, String step, Kind kind, String index) {
        try {
            int number = Integer.parseInt(step);
            long indexNumber = kind == Kind.COMPACTION ? Long.parseLong(index) : Integer.parseInt(index);
            return number < 1 ? Optional.empty() : Optional.of(new Parsed(runId, number, kind, indexNumber));
        } catch (NumberFormatException outOfRange) {
            return Optional.empty();
        }
    }

    private static long index(long n) {
        if (n < 0) {
            throw new IllegalArgumentException("item numbers count from 0, not " + n);
        }
        return n;
    }
}
