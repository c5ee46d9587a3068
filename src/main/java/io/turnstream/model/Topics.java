package io.turnstream.model;

import java.util.Map;
import java.util.Properties;

/**
 * The topic names of the contract. Defaults here; each can be renamed with a property
 * {@code turnstream.topic.<role>} (for example {@code turnstream.topic.upserts=prod.llm.upserts}).
 */
public record Topics(String rawEvents, String upserts, String itemState, String toolCalls, String toolResults,
                     String control, String deadLetters) {

    public static final Topics DEFAULTS = new Topics("llm.raw-events", "llm.upserts", "llm.item-state",
            "llm.tool-calls", "llm.tool-results", "llm.control", "llm.raw-events.dlq");

    public static final String PREFIX = "turnstream.topic.";

    public static Topics from(Properties props) {
        return new Topics(
                props.getProperty(PREFIX + "raw-events", DEFAULTS.rawEvents),
                props.getProperty(PREFIX + "upserts", DEFAULTS.upserts),
                props.getProperty(PREFIX + "item-state", DEFAULTS.itemState),
                props.getProperty(PREFIX + "tool-calls", DEFAULTS.toolCalls),
                props.getProperty(PREFIX + "tool-results", DEFAULTS.toolResults),
                props.getProperty(PREFIX + "control", DEFAULTS.control),
                props.getProperty(PREFIX + "dead-letters", DEFAULTS.deadLetters));
    }

    /** Every topic by role, in the order of the contract's table. */
    public Map<String, String> byRole() {
        return Map.of("raw-events", rawEvents, "upserts", upserts, "item-state", itemState,
                "tool-calls", toolCalls, "tool-results", toolResults, "control", control,
                "dead-letters", deadLetters);
    }
}
