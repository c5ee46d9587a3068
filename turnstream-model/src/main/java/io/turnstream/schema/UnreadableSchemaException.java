package io.turnstream.schema;

import java.io.IOException;

/**
 * The schema registry answered, and the schema id a record names is one we cannot read with: unknown to
 * the registry, not an Avro schema (PROTOBUF, JSON) or not valid Avro. Ids are immutable, so this is a
 * property of every record that names the id, never of the registry's state: an {@link IOException} like
 * any other unreadable record, to be dead-lettered with the message. Compare {@link SchemaRegistryException}.
 */
public final class UnreadableSchemaException extends IOException {

    /** @param message names the schema id ("schema id N is ..."), which is what the dead letter's reason shows */
    public UnreadableSchemaException(String message, Throwable cause) {
        super(message, cause);
    }
}
