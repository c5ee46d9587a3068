package io.turnstream.runtime;

import java.util.HashSet;
import java.util.Set;

/** Turns an exception chain into one readable line for operators: what failed, and the root cause. */
public final class Failures {

    private Failures() {
    }

    /**
     * The outermost message and, when different, the root cause, e.g.
     * {@code Error encountered sending record to topic llm.upserts (caused by RecordTooLargeException: ...)}.
     */
    public static String describe(Throwable failure) {
        Throwable root = rootCause(failure);
        String outer = messageOf(failure);
        String line = root == failure || outer.contains(String.valueOf(root.getMessage())) ? outer
                : outer + " (caused by " + root.getClass().getSimpleName() + ": " + root.getMessage() + ")";
        // Kafka's messages span lines; an error report stays on one
        return line.strip().replaceAll("\\s*\\R\\s*", " ");
    }

    public static Throwable rootCause(Throwable failure) {
        Set<Throwable> seen = new HashSet<>();
        Throwable current = failure;
        while (current.getCause() != null && seen.add(current)) {
            current = current.getCause();
        }
        return current;
    }

    /** Whether {@code type} appears anywhere in the cause chain. */
    public static boolean causedBy(Throwable failure, Class<? extends Throwable> type) {
        Set<Throwable> seen = new HashSet<>();
        for (Throwable t = failure; t != null && seen.add(t); t = t.getCause()) {
            if (type.isInstance(t)) {
                return true;
            }
        }
        return false;
    }

    private static String messageOf(Throwable t) {
        String message = t.getMessage();
        return message == null || message.isBlank() ? t.getClass().getSimpleName() : message;
    }
}
