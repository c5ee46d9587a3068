package io.turnstream.schema;

import io.turnstream.model.WireFormat;
import java.io.IOException;
import java.net.ConnectException;

/**
 * JSON; while {@link #down}, every read fails as an Avro read does when the schema registry cannot be reached (a
 * schema id not cached yet): {@link SchemaRegistryException}, nobody's record's fault.
 */
public final class RegistryOutage implements WireFormat {

    /** Whether the registry cannot be reached now. */
    public volatile boolean down;

    @Override
    public byte[] write(String topic, Object value) {
        return WireFormat.JSON.write(topic, value);
    }

    @Override
    public <T> T read(String topic, byte[] bytes, Class<T> type) throws IOException {
        if (down) {
            throw new SchemaRegistryException("schema registry [http://127.0.0.1:8081/] cannot be reached "
                    + "(connection refused)", -1, new ConnectException());
        }
        return WireFormat.JSON.read(topic, bytes, type);
    }
}
