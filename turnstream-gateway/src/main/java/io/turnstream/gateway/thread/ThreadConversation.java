package io.turnstream.gateway.thread;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.gateway.loop.MaxTokensContinuation;
import io.turnstream.gateway.provider.Conversation;
import io.turnstream.gateway.provider.ToolCallRequest;
import io.turnstream.gateway.turn.TurnRequest;
import io.turnstream.model.Json;
import io.turnstream.model.Origins;
import io.turnstream.model.StepItemIds;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UiItemType;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Rebuilds a thread's conversation for a request that sends only what is new ({@link TurnRequest#fromThread()}),
 * or that names earlier turns of the thread in the conversation it sends ({@link Conversation.EarlierTurn}), from
 * what Kafka holds of the thread's earlier turns. Each earlier turn gives its request (its own history when the
 * client sent the whole conversation, else what it added), its prompt, and each completed model step: the
 * assistant's step exactly as the provider sent it (thinking signatures, encrypted reasoning) when the step's
 * checkpoint is kept and the new turn uses the same provider, else the step's text and tool calls from
 * {@code llm.item-state}; then the step's tool results. A call left without a result (a client-side call the
 * next request does not answer) is answered {@value #NO_RESULT}, as every provider needs a result after a call.
 * Without the checkpoints (past their retention) the steps come from the items alone. Pure: the Kafka reads
 * are {@link ThreadHistory}'s.
 */
public final class ThreadConversation {

    static final String NO_RESULT = "no result: the call was not answered";

    /**
     * What Kafka holds of one earlier turn of the thread.
     *
     * @param provider the provider the turn ran with (its steps' native shape)
     * @param checkpoints the checkpoints of its completed steps by step number (from {@code llm.turn-requests})
     * @param items the current state of its items, in stream order (from {@code llm.item-state})
     */
    public record PastTurn(String turnId, String runId, TurnRequest request, String provider,
                           Map<Integer, JsonNode> checkpoints, List<UIUpsert> items) {
        public PastTurn {
            checkpoints = Map.copyOf(checkpoints);
            items = List.copyOf(items);
        }
    }

    private final Map<String, PastTurn> past = new LinkedHashMap<>();
    private final String provider;
    private final List<Conversation.Entry> entries = new ArrayList<>();
    /** The last step's calls (by call id) and the results found for them, not yet in {@link #entries}. */
    private final Map<String, Conversation.ToolCall> unanswered = new LinkedHashMap<>();
    private final Map<String, Conversation.ToolOutput> answers = new LinkedHashMap<>();

    private ThreadConversation(List<PastTurn> past, String provider) {
        past.forEach(turn -> this.past.put(turn.turnId(), turn));
        this.provider = provider;
    }

    /**
     * The request {@code next} with the thread's conversation before it as its history, and the earlier turns it
     * names replaced by their steps; {@code next} itself when it does neither.
     *
     * @param past the thread's earlier turns, in the order they were requested
     * @param provider the provider {@code next} runs with
     */
    public static TurnRequest rebuild(List<PastTurn> past, String provider, TurnRequest next) {
        if (!next.fromThread() && !namesEarlierTurns(next.history())) {
            return next;
        }
        ThreadConversation conversation = new ThreadConversation(past, provider);
        if (next.fromThread()) {
            past.forEach(conversation::addTurn);
        }
        conversation.addAll(next.history());
        conversation.answerTheRest();
        return next.withHistory(conversation.entries);
    }

    /** Whether a conversation names earlier turns of the thread, whose steps come from Kafka. */
    public static boolean namesEarlierTurns(List<Conversation.Entry> said) {
        return said.stream().anyMatch(Conversation.EarlierTurn.class::isInstance);
    }

    private void addTurn(PastTurn turn) {
        TurnRequest request = turn.request();
        if (!request.fromThread()) {
            // the client sent the whole conversation before this turn: it replaces what was rebuilt
            unanswered.clear();
            answers.clear();
            entries.clear();
        }
        addAll(request.history());
        if (request.prompt() != null) {
            add(new Conversation.UserText(request.prompt(), request.files()));
        }
        addSteps(turn);
    }

    /** The turn's completed model steps, each with its tool results. */
    private void addSteps(PastTurn turn) {
        Map<Integer, List<UIUpsert>> itemsByStep = itemsByStep(turn);
        List<Conversation.ToolOutput> outputs = outputsOf(turn.items());
        TreeSet<Integer> steps = new TreeSet<>(turn.checkpoints().isEmpty() ? itemsByStep.keySet()
                : turn.checkpoints().keySet());
        for (int step : steps) {
            List<UIUpsert> items = itemsByStep.getOrDefault(step, List.of());
            JsonNode checkpoint = turn.checkpoints().get(step);
            List<Conversation.ToolCall> calls = checkpoint != null ? callsOf(checkpoint) : callsOf(items);
            if (checkpoint != null && provider.equals(turn.provider()) && checkpoint.hasNonNull("assistant")) {
                add(new Conversation.AssistantNative(checkpoint.get("assistant")));
            } else {
                String text = textOf(items);
                if (!calls.isEmpty()) {
                    add(new Conversation.AssistantToolCalls(text.isEmpty() ? null : text, calls));
                } else if (!text.isEmpty()) {
                    add(new Conversation.AssistantText(text));
                }
            }
            calls.forEach(call -> unanswered.put(call.callId(), call));
            outputs.forEach(output -> {
                if (unanswered.containsKey(output.callId())) {
                    answers.put(output.callId(), output);
                }
            });
            if (checkpoint != null && checkpoint.path("continued").asBoolean(false)) {
                add(new Conversation.UserText(MaxTokensContinuation.PROMPT));
            }
        }
    }

    private void addAll(List<Conversation.Entry> said) {
        said.forEach(this::add);
    }

    /**
     * Adds an entry; results join the open calls' results, anything else first closes them. An earlier turn becomes
     * its steps, or its text when Kafka no longer holds it.
     */
    private void add(Conversation.Entry entry) {
        if (entry instanceof Conversation.EarlierTurn earlier) {
            PastTurn turn = past.get(earlier.turnId());
            if (turn != null) {
                addSteps(turn);
            } else if (!earlier.text().isBlank()) {
                add(new Conversation.AssistantText(earlier.text()));
            }
            return;
        }
        if (entry instanceof Conversation.ToolOutputs outputs && !unanswered.isEmpty()) {
            outputs.outputs().forEach(output -> answers.put(output.callId(), output));
            return;
        }
        answerTheRest();
        entries.add(entry);
    }

    /** Closes the open calls: their results in call order, {@value #NO_RESULT} for those without one. */
    private void answerTheRest() {
        if (unanswered.isEmpty()) {
            return;
        }
        List<Conversation.ToolOutput> outputs = new ArrayList<>();
        unanswered.values().forEach(call -> outputs.add(answers.getOrDefault(call.callId(),
                new Conversation.ToolOutput(call.callId(), call.name(), NO_RESULT, false))));
        answers.keySet().removeAll(unanswered.keySet());
        unanswered.clear();
        entries.add(new Conversation.ToolOutputs(outputs));
    }

    /** Items of the turn's steps by step number: {@code {runId}-s{step}-{n}} and {@code {runId}-s{step}-out{k}}. */
    private static Map<Integer, List<UIUpsert>> itemsByStep(PastTurn turn) {
        Map<Integer, List<UIUpsert>> steps = new LinkedHashMap<>();
        for (UIUpsert item : turn.items()) {
            StepItemIds.parse(item.itemId())
                    .filter(id -> id.runId().equals(turn.runId()))
                    .filter(id -> id.kind() == StepItemIds.Kind.ITEM || id.kind() == StepItemIds.Kind.OUTPUT)
                    .ifPresent(id -> steps.computeIfAbsent(id.step(), step -> new ArrayList<>()).add(item));
        }
        return steps;
    }

    /** What the agent said in a step: its messages (not a compaction summary, not the user's). */
    private static String textOf(List<UIUpsert> items) {
        StringBuilder text = new StringBuilder();
        for (UIUpsert item : items) {
            if (item.itemType() == UiItemType.MESSAGE && item.content() != null
                    && (item.origin() == null || Origins.AGENT.equals(item.origin()))) {
                text.append(item.content());
            }
        }
        return text.toString();
    }

    private static List<Conversation.ToolCall> callsOf(JsonNode checkpoint) {
        List<Conversation.ToolCall> calls = new ArrayList<>();
        if (!checkpoint.path("toolCalls").isArray()) {
            return calls;
        }
        for (ToolCallRequest call : Json.MAPPER.convertValue(checkpoint.get("toolCalls"), ToolCallRequest[].class)) {
            calls.add(new Conversation.ToolCall(call.callId(), call.name(), object(call.arguments())));
        }
        return calls;
    }

    private static List<Conversation.ToolCall> callsOf(List<UIUpsert> items) {
        List<Conversation.ToolCall> calls = new ArrayList<>();
        for (UIUpsert item : items) {
            if (item.itemType() == UiItemType.TOOL_CALL && item.callId() != null) {
                JsonNode arguments = item.toolArguments();
                calls.add(new Conversation.ToolCall(item.callId(), item.toolName(), arguments != null
                        && arguments.isObject() ? arguments : object(arguments == null ? null : arguments.asText())));
            }
        }
        return calls;
    }

    private static List<Conversation.ToolOutput> outputsOf(List<UIUpsert> items) {
        List<Conversation.ToolOutput> outputs = new ArrayList<>();
        for (UIUpsert item : items) {
            if (item.itemType() == UiItemType.TOOL_OUTPUT && item.callId() != null) {
                outputs.add(new Conversation.ToolOutput(item.callId(), item.toolName(),
                        item.content() == null ? "" : item.content(), !Boolean.FALSE.equals(item.success())));
            }
        }
        return outputs;
    }

    /** A call's arguments as the JSON object a provider takes back; what is not one becomes {@code {}}. */
    private static JsonNode object(String arguments) {
        try {
            JsonNode parsed = arguments == null || arguments.isBlank() ? null : Json.MAPPER.readTree(arguments);
            return parsed != null && parsed.isObject() ? parsed : Json.MAPPER.createObjectNode();
        } catch (JsonProcessingException e) {
            return Json.MAPPER.createObjectNode();
        }
    }
}
