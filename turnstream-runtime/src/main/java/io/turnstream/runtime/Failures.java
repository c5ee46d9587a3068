package io.turnstream.runtime;

import io.turnstream.schema.SchemaRegistryException;
import io.turnstream.schema.UnreadableSchemaException;
import java.util.HashSet;
import java.util.Set;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.InvalidTxnStateException;
import org.apache.kafka.common.errors.ProducerFencedException;

/** Turns an exception chain into one readable line for operators: what failed, and the root cause. */
public final class Failures {

    private Failures() {
    }

    /**
     * The outermost message, the messages of the causes between that add to it, and the root cause, e.g.
     * {@code Exception caught in process ...: Error encountered sending record to topic llm.upserts
     * (caused by RecordTooLargeException: ...)}. The middle matters: Kafka Streams names the failing
     * topic there when a send error surfaces in the next {@code process()}.
     */
    public static String describe(Throwable failure) {
        Throwable root = rootCause(failure);
        StringBuilder line = new StringBuilder(messageOf(failure));
        Set<Throwable> seen = new HashSet<>();
        for (Throwable t = failure.getCause(); t != null && t != root && seen.add(t); t = t.getCause()) {
            String message = t.getMessage();
            if (message != null && !message.isBlank() && line.indexOf(message) < 0) {
                line.append(": ").append(message);
            }
        }
        String rootType = root.getClass().getSimpleName();
        if (root != failure && (line.indexOf(String.valueOf(root.getMessage())) < 0 || line.indexOf(rootType) < 0)) {
            line.append(" (caused by ").append(rootType).append(": ").append(root.getMessage()).append(')');
        }
        // Kafka's messages span lines; an error report stays on one
        return line.toString().strip().replaceAll("\\s*\\R\\s*", " ");
    }

    public static Throwable rootCause(Throwable failure) {
        Set<Throwable> seen = new HashSet<>();
        Throwable current = failure;
        while (current.getCause() != null && seen.add(current)) {
            current = current.getCause();
        }
        return current;
    }

    /**
     * Whether the failure is a send that found a transactional producer already failed: a consequence
     * of an earlier failed send, which it does not name.
     */
    public static boolean foundProducerFailed(Throwable failure) {
        Set<Throwable> seen = new HashSet<>();
        for (Throwable t = failure; t != null && seen.add(t); t = t.getCause()) {
            if (t.getMessage() != null && t.getMessage().contains("because we are in an error state")) {
                return true;
            }
        }
        return false;
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

    /**
     * Whether a transactional producer failed because its epoch was bumped since its transaction began: by another
     * producer's {@code initTransactions} with the same transactional id, or by the transaction coordinator, which
     * bumps it as it aborts a transaction past its {@code transaction.timeout.ms} (transactions v2). Which error
     * says so depends on the request that meets the bump first: a write fails with
     * {@code InvalidProducerEpochException}; a commit one epoch behind with no send in flight with
     * {@code InvalidTxnStateException} (the coordinator takes it for a retried commit of the transaction it
     * aborted); a request the coordinator checks strictly, or a commit further behind, with
     * {@code ProducerFencedException}. None of them tells the coordinator's abort from another producer.
     */
    public static boolean epochBumped(Throwable failure) {
        return causedBy(failure, ProducerFencedException.class) || causedBy(failure, InvalidProducerEpochException.class)
                || causedBy(failure, InvalidTxnStateException.class);
    }

    /**
     * The schema registry's failure behind {@code failure}, if that is what it is: a {@link SchemaRegistryException}
     * anywhere in the causes, unless under an {@link UnreadableSchemaException} (the record names a schema it cannot
     * be read with: the record's fault, whatever the registry answered); else null.
     */
    public static SchemaRegistryException registryFailure(Throwable failure) {
        Set<Throwable> seen = new HashSet<>();
        for (Throwable t = failure; t != null && seen.add(t); t = t.getCause()) {
            if (t instanceof UnreadableSchemaException) {
                return null;
            }
            if (t instanceof SchemaRegistryException registry) {
                return registry;
            }
        }
        return null;
    }

    private static String messageOf(Throwable t) {
        String message = t.getMessage();
        return message == null || message.isBlank() ? t.getClass().getSimpleName() : message;
    }
}
