package io.turnstream.schema;

import io.turnstream.model.WireFormat;
import java.io.IOException;
import java.net.ConnectException;

/**
 * JSON; while {@link #down}, every read fails as an Avro read does when the schema registry cannot be reached (a
 * schema id not cached yet): {@link SchemaRegistryException}, nobody's record's fault. While {@link #writesDown},
 * every write fails so, as an Avro write does that registers a schema not registered yet.
 */
public final class RegistryOutage implements WireFormat {

    /** Whether the registry cannot be reached now to read. */
    public volatile boolean down;
    /** Whether the registry cannot be reached now to write. */
    public volatile boolean writesDown;

    @Override
    public byte[] write(String topic, Object value) {
        if (writesDown) {
            throw cannotBeReached();
        }
        return WireFormat.JSON.write(topic, value);
    }

    @Override
    public <T> T read(String topic, byte[] bytes, Class<T> type) throws IOException {
        if (down) {
            throw cannotBeReached();
        }
        return WireFormat.JSON.read(topic, bytes, type);
    }

    private static SchemaRegistryException cannotBeReached() {
        return new SchemaRegistryException("schema registry [http://127.0.0.1:8081/] cannot be reached "
                + "(connection refused)", -1, new ConnectException());
    }
}
