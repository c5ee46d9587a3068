package io.turnstream.schema;

/**
 * The schema registry refused a request or could not be reached. Not a property of any one record,
 * so callers must not dead-letter records because of it.
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
