package io.turnstream.model;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;

/**
 * The topic names of the contract. Defaults here; each can be renamed with a property
 * {@code turnstream.topic.<role>} (for example {@code turnstream.topic.upserts=prod.llm.upserts}).
 *
 * @param itemAppends live text appends per item, key turn id
 * @param turnRequests accepted turns waiting for a gateway to own them, key thread id
 * @param toolDefinitions the tool executor's tools, compacted, key tool name
 * @param threadAllowances tools a person allowed for the rest of a thread ({@code remember: true}), compacted,
 *                         key {@code <tenantId>/<threadId>/<toolName>}
 */
public record Topics(String rawEvents, String upserts, String itemState, String toolCalls, String toolResults,
                     String control, String deadLetters, String itemAppends, String turnRequests,
                     String toolDefinitions, String threadAllowances) {

    public static final Topics DEFAULTS = new Topics("llm.raw-events", "llm.upserts", "llm.item-state",
            "llm.tool-calls", "llm.tool-results", "llm.control", "llm.raw-events.dlq", "llm.item-appends",
            "llm.turn-requests", "llm.tool-definitions", "llm.thread-allowances");

    public static final String PREFIX = "turnstream.topic.";

    public static Topics from(Properties props) {
        return new Topics(
                props.getProperty(PREFIX + "raw-events", DEFAULTS.rawEvents),
                props.getProperty(PREFIX + "upserts", DEFAULTS.upserts),
                props.getProperty(PREFIX + "item-state", DEFAULTS.itemState),
                props.getProperty(PREFIX + "tool-calls", DEFAULTS.toolCalls),
                props.getProperty(PREFIX + "tool-results", DEFAULTS.toolResults),
                props.getProperty(PREFIX + "control", DEFAULTS.control),
                props.getProperty(PREFIX + "dead-letters", DEFAULTS.deadLetters),
                props.getProperty(PREFIX + "item-appends", DEFAULTS.itemAppends),
                props.getProperty(PREFIX + "turn-requests", DEFAULTS.turnRequests),
                props.getProperty(PREFIX + "tool-definitions", DEFAULTS.toolDefinitions),
                props.getProperty(PREFIX + "thread-allowances", DEFAULTS.threadAllowances));
    }

    /** Every role named {@code prefix + role}, for isolated sets of topics (benchmark phases, tests). */
    public static Topics prefixed(String prefix) {
        Properties names = new Properties();
        DEFAULTS.byRole().keySet().forEach(role -> names.setProperty(PREFIX + role, prefix + role));
        return from(names);
    }

    /** Every topic by role, in the order of the contract's table, then the topics added since. */
    public Map<String, String> byRole() {
        Map<String, String> roles = new LinkedHashMap<>();
        roles.put("raw-events", rawEvents);
        roles.put("upserts", upserts);
        roles.put("item-state", itemState);
        roles.put("tool-calls", toolCalls);
        roles.put("tool-results", toolResults);
        roles.put("control", control);
        roles.put("dead-letters", deadLetters);
        roles.put("item-appends", itemAppends);
        roles.put("turn-requests", turnRequests);
        roles.put("tool-definitions", toolDefinitions);
        roles.put("thread-allowances", threadAllowances);
        return Collections.unmodifiableMap(roles);
    }

    /** Topics that keep the latest record per key. */
    public boolean compacted(String topic) {
        return topic.equals(itemState) || topic.equals(toolDefinitions) || topic.equals(threadAllowances);
    }
}
