package io.turnstream.model;

import java.util.Arrays;
import java.util.Locale;

/** Each vocabulary's wire words, computed once: {@link WireValue#wire()} runs for every record written. */
final class WireWords {

    private static final ClassValue<String[]> WORDS = new ClassValue<>() {
        @Override
        protected String[] computeValue(Class<?> vocabulary) {
            return Arrays.stream(vocabulary.getEnumConstants())
                    .map(word -> ((Enum<?>) word).name().toLowerCase(Locale.ROOT)).toArray(String[]::new);
        }
    };

    private WireWords() {
    }

    static String of(Enum<?> word) {
        return WORDS.get(word.getDeclaringClass())[word.ordinal()];
    }
}
