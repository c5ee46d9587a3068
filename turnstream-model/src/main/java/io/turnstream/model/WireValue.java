package io.turnstream.model;

import com.fasterxml.jackson.annotation.JsonValue;

/**
 * A word of the contract's vocabularies, implemented by enums: its wire form (JSON, Avro, headers,
 * logs) is the constant's name in lower case, exactly the strings the contract names. Jackson writes
 * and reads it through {@link #wire()}; implementations return it from {@code toString()} too, so text
 * built from a value reads as it does on the wire.
 */
public interface WireValue {

    @JsonValue
    default String wire() {
        return WireWords.of((Enum<?>) this);
    }

    /** The wire form of {@code value}, or null for none: for columns and maps that take text. */
    static String wireOrNull(WireValue value) {
        return value == null ? null : value.wire();
    }

    /** The constant whose wire form is {@code wire}, or null when there is none (an unknown word, or null). */
    static <E extends Enum<E> & WireValue> E fromWire(Class<E> vocabulary, String wire) {
        if (wire == null) {
            return null;
        }
        for (E value : vocabulary.getEnumConstants()) {
            if (value.wire().equals(wire)) {
                return value;
            }
        }
        return null;
    }
}
