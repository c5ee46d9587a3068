package io.turnstream.model;

import com.fasterxml.jackson.annotation.JsonTypeInfo;
import com.fasterxml.jackson.databind.DatabindContext;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.jsontype.impl.TypeIdResolverBase;
import java.util.Arrays;
import java.util.TreeSet;
import java.util.stream.Collectors;

/** Jackson's type ids of {@link UiPayload}: the {@link UiPayloadType} words, each naming its record. */
final class UiPayloadTypeIds extends TypeIdResolverBase {

    @Override
    public String idFromValue(Object value) {
        return ((UiPayload) value).type().wire();
    }

    @Override
    public String idFromValueAndType(Object value, Class<?> suggestedType) {
        return idFromValue(value);
    }

    /** Null for an unknown id: Jackson then reports it with {@link #getDescForKnownTypeIds()}. */
    @Override
    public JavaType typeFromId(DatabindContext context, String id) {
        UiPayloadType type = UiPayloadType.fromWire(id);
        return type == null ? null : context.constructType(type.recordType());
    }

    @Override
    public String getDescForKnownTypeIds() {
        return "known type ids = " + Arrays.stream(UiPayloadType.values()).map(UiPayloadType::wire)
                .collect(Collectors.toCollection(TreeSet::new));
    }

    @Override
    public JsonTypeInfo.Id getMechanism() {
        return JsonTypeInfo.Id.CUSTOM;
    }
}
