package io.turnstream.gateway.sim;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/** Deterministic filler text, and the token split the simulated provider streams by. */
public final class SimulatedText {

    private static final String[] WORDS = ("Turnstream carries every token of this answer from the simulated "
            + "provider through the gateway onto Kafka, where the topology batches deltas into upserts that a "
            + "user interface can bind without tracking deltas or guessing what it missed.").split(" ");

    /** A word boundary: before any non-space that follows a space. */
    private static final Pattern TOKEN_BOUNDARY = Pattern.compile("(?<=\\s)(?=\\S)");

    private SimulatedText() {
    }

    /** {@code count} words, sentences of the same text repeated. */
    public static String words(int count) {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < count; i++) {
            if (i > 0) {
                text.append(' ');
            }
            text.append(WORDS[i % WORDS.length]);
        }
        return text.toString();
    }

    /** The text as tokens: one word and the space after it each. Concatenated, they give the text back. */
    public static List<String> tokens(String text) {
        List<String> tokens = new ArrayList<>();
        for (String token : TOKEN_BOUNDARY.split(text)) {
            if (!token.isEmpty()) {
                tokens.add(token);
            }
        }
        return tokens;
    }
}
