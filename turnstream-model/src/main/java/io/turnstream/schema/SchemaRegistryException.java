package io.turnstream.schema;

/**
 * The schema registry refused a request or could not be reached (or answered what no registry does).
 * The registry's state, not a property of any one record: callers must not dead-letter records because
 * of it, but fail and try again (the topology's task fails and its replacement reads the record again; the
 * gateway lets the partition go and takes it over again later). A record naming a schema id that the
 * registry answers for but we cannot read with is {@link UnreadableSchemaException} instead.
 */
public class SchemaRegistryException extends RuntimeException {

    private final int errorCode;

    public SchemaRegistryException(String message, int errorCode, Throwable cause) {
        super(message, cause);
        this.errorCode = errorCode;
    }

    /** The registry's {@code error_code} (e.g. 40403 schema not found, 409 incompatible), or -1 when it did not answer. */
    public int errorCode() {
        return errorCode;
    }
}
