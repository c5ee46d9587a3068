package io.turnstream.gateway.loop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.turnstream.gateway.provider.Conversation;
import io.turnstream.gateway.provider.ErrorCodes;
import io.turnstream.gateway.provider.StepItems;
import io.turnstream.gateway.provider.StepOutcome;
import io.turnstream.gateway.provider.ToolCallRequest;
import io.turnstream.model.ItemType;
import io.turnstream.model.Json;
import io.turnstream.model.OutputItem;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StepItemIds;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.StreamPayload.Usage;
import io.turnstream.model.TurnRequestRecord;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * How far a turn got, as far as Kafka knows: where its agent loop starts. A new turn starts at
 * the beginning; a turn taken over from another gateway goes on after its last checkpointed step
 * (whose assistant content and tool calls come from the step records on {@code llm.turn-requests})
 * reusing the tool outputs already published on {@code llm.raw-events}, and takes back the step
 * that was streaming when the other gateway stopped.
 *
 * @param started {@code response_start} is published
 * @param promptStarted the user prompt's {@code item_start} is published
 * @param promptDone the user prompt's {@code item_done} is published
 * @param completed what the conversation gained in the steps before {@code nextStep}, tool outputs
 *                  of the {@code awaiting} step excepted
 * @param nextStep the first step to call the model for
 * @param model the model the turn uses now (a fallback may have replaced the requested one)
 * @param usage the usage of the checkpointed steps, or null
 * @param failedUsage the usage of the turn's failed model calls up to the last checkpoint, or null
 * @param awaiting the last checkpointed step when it called tools, else null
 * @param interrupted the step that was streaming, to withdraw, else null
 * @param finishReason set when the last checkpointed step was the final one
 * @param endedStatus set when the turn already ended
 * @param continuations how many steps were continued after the output token limit
 * @param carried the message the last checkpointed step left open to be continued by {@code nextStep}, or null
 * @param carriedTouched the step that was streaming wrote into the carried message (or closed it): take it back
 */
public record TurnProgress(boolean started, boolean promptStarted, boolean promptDone, List<Conversation.Entry> completed,
                    int nextStep, String model, Usage usage, Usage failedUsage, Awaiting awaiting, Interrupted interrupted,
                    String finishReason, ResponseStatus endedStatus, int continuations, StepItems.Carried carried,
                    boolean carriedTouched) {

    /**
     * A step whose tool calls are waiting for results.
     *
     * @param published outputs already published, by call id
     * @param unreleased calls whose {@code item_done} the previous gateway had not published after the
     *                   step's checkpoint: they have not gone to the executor yet
     * @param denied ids of published outputs that are denials (their {@code tool_status} says {@code DENIED}):
     *               with {@code on-deny} {@code stop} the turn ends after this step
     */
    public record Awaiting(int step, List<ToolCallRequest> calls, Map<String, Conversation.ToolOutput> published,
                           List<ToolCallRequest> unreleased, Set<String> denied) {
    }

    /**
     * A step that was streaming.
     *
     * @param nextItem the index the step's next item takes
     * @param shown its items not withdrawn yet, open or done, in the order they started
     */
    public record Interrupted(int step, int nextItem, List<String> shown) {
    }

    public static TurnProgress fresh(String model) {
        return new TurnProgress(false, false, false, List.of(), 1, model, null, null, null, null, null, null, 0, null,
                false);
    }

    /**
     * What the checkpoint of a completed step holds.
     *
     * @param usage the turn's usage up to and with this step
     * @param failedUsage the usage of the turn's failed model calls so far, or null
     * @param continued the step stopped at the output token limit and the model is asked to go on
     * @param carried the message it left open for the continuation to join, or null
     */
    public static ObjectNode checkpoint(String model, Usage usage, Usage failedUsage, StepOutcome outcome,
                                       boolean continued, StepItems.Carried carried) {
        ObjectNode json = Json.MAPPER.createObjectNode().put("model", model);
        if (usage != null) {
            json.set("usage", Json.MAPPER.valueToTree(usage));
        }
        if (failedUsage != null) {
            json.set("failedUsage", Json.MAPPER.valueToTree(failedUsage));
        }
        json.set("assistant", outcome.assistantContent());
        json.set("toolCalls", Json.MAPPER.valueToTree(outcome.toolCalls()));
        if (outcome.finishReason() != null) {
            json.put("finishReason", outcome.finishReason());
        }
        if (continued) {
            json.put("continued", true);
        }
        if (carried != null) {
            json.putObject("continuedItem").put("id", carried.itemId()).put("text", carried.text());
        }
        return json;
    }

    /**
     * Folds what Kafka holds of a run.
     *
     * @param steps the turn's step records, in order
     * @param events the run's raw events, in order
     */
    public static TurnProgress of(String runId, String requestedModel, List<TurnRequestRecord> steps,
                           List<StreamPayload> events) {
        String promptId = runId + "-user-prompt";
        Map<String, ItemType> startedItems = new LinkedHashMap<>();
        Set<String> closedItems = new HashSet<>();
        Set<String> withdrawnItems = new HashSet<>();
        Map<String, Integer> streamedLength = new HashMap<>();
        Map<String, OutputItem> outputs = new HashMap<>();
        Set<String> denied = new HashSet<>();
        boolean started = false;
        ResponseStatus ended = null;
        for (StreamPayload payload : events) {
            if (payload instanceof StreamPayload.ResponseStart) {
                started = true;
            } else if (payload instanceof StreamPayload.ItemStart start) {
                startedItems.put(start.itemId(), start.knownItemType());
                streamedLength.put(start.itemId(), start.initialContent() == null ? 0 : start.initialContent().length());
            } else if (payload instanceof StreamPayload.ItemDelta delta && delta.deltaContent() != null) {
                streamedLength.merge(delta.itemId(), delta.deltaContent().length(), Integer::sum);
            } else if (payload instanceof StreamPayload.ItemDone done) {
                closedItems.add(done.itemId());
                if (done.finalItem() != null && done.finalItem().knownType() == ItemType.FUNCTION_CALL_OUTPUT) {
                    outputs.put(done.finalItem().callId(), done.finalItem());
                }
            } else if (payload instanceof StreamPayload.ItemError error) {
                closedItems.add(error.itemId());
            } else if (payload instanceof StreamPayload.ItemCancelled cancelled) {
                closedItems.add(cancelled.itemId());
            } else if (payload instanceof StreamPayload.ItemWithdrawn withdrawn) {
                withdrawnItems.add(withdrawn.itemId());
            } else if (payload instanceof StreamPayload.ToolStatus status && status.error() != null
                    && ErrorCodes.TOOL_CALL_DENIED.equals(status.error().code())) {
                denied.add(status.callId());
            } else if (payload instanceof StreamPayload.ResponseDone done) {
                ended = done.status();
            } else if (payload instanceof StreamPayload.ResponseError) {
                ended = ResponseStatus.ERROR;
            }
        }
        List<Conversation.Entry> completed = new ArrayList<>();
        String model = requestedModel;
        Usage usage = null;
        Usage failedUsage = null;
        Awaiting awaiting = null;
        String finishReason = null;
        int lastStep = 0;
        int continuations = 0;
        StepItems.Carried carried = null;
        for (TurnRequestRecord record : steps) {
            JsonNode checkpoint = record.checkpoint();
            lastStep = record.step().intValue();
            model = checkpoint.path("model").asText(model);
            usage = checkpoint.hasNonNull("usage") ? Json.MAPPER.convertValue(checkpoint.get("usage"), Usage.class) : null;
            failedUsage = checkpoint.hasNonNull("failedUsage")
                    ? Json.MAPPER.convertValue(checkpoint.get("failedUsage"), Usage.class) : null;
            if (awaiting != null) {
                completed.add(outputsOf(awaiting.calls(), outputs));
            }
            completed.add(new Conversation.AssistantNative(checkpoint.get("assistant")));
            List<ToolCallRequest> calls = List.of(Json.MAPPER.convertValue(checkpoint.path("toolCalls"),
                    ToolCallRequest[].class));
            Map<String, Conversation.ToolOutput> published = publishedOutputs(calls, outputs);
            awaiting = calls.isEmpty() ? null : new Awaiting(lastStep, calls, published,
                    calls.stream().filter(call -> !closedItems.contains(call.itemId())).toList(),
                    calls.stream().map(ToolCallRequest::callId)
                            .filter(id -> published.containsKey(id) && denied.contains(id)).collect(Collectors.toSet()));
            finishReason = calls.isEmpty() ? checkpoint.path("finishReason").asText("stop") : null;
            carried = null;
            if (checkpoint.path("continued").asBoolean(false)) {
                completed.add(new Conversation.UserText(MaxTokensContinuation.PROMPT));
                continuations++;
                finishReason = null;
                JsonNode item = checkpoint.path("continuedItem");
                if (item.hasNonNull("id")) {
                    String id = item.get("id").asText();
                    carried = new StepItems.Carried(id, item.path("text").asText(""), !withdrawnItems.contains(id));
                }
            }
        }
        // the message is as its step left it unless the step that was streaming wrote into it or closed it
        boolean carriedTouched = carried != null && carried.open() && (closedItems.contains(carried.itemId())
                || streamedLength.getOrDefault(carried.itemId(), 0) != carried.text().length());
        return new TurnProgress(started, startedItems.containsKey(promptId), closedItems.contains(promptId),
                List.copyOf(completed), lastStep + 1, model, usage, failedUsage, awaiting,
                interrupted(runId, lastStep + 1, startedItems.keySet(), withdrawnItems),
                finishReason, ended, continuations, carried, carriedTouched);
    }

    private static Conversation.ToolOutputs outputsOf(List<ToolCallRequest> calls, Map<String, OutputItem> outputs) {
        Map<String, Conversation.ToolOutput> published = publishedOutputs(calls, outputs);
        return new Conversation.ToolOutputs(calls.stream().map(call -> published.get(call.callId())).toList());
    }

    private static Map<String, Conversation.ToolOutput> publishedOutputs(List<ToolCallRequest> calls,
                                                                        Map<String, OutputItem> outputs) {
        Map<String, Conversation.ToolOutput> published = new LinkedHashMap<>();
        for (ToolCallRequest call : calls) {
            OutputItem output = outputs.get(call.callId());
            if (output != null) {
                String text = Json.asText(output.output());
                published.put(call.callId(), new Conversation.ToolOutput(call.callId(),
                        output.name() != null ? output.name() : call.name(), text == null ? "" : text,
                        Boolean.TRUE.equals(output.success())));
            }
        }
        return published;
    }

    private static Interrupted interrupted(String runId, int step, Set<String> startedItems,
                                           Set<String> withdrawnItems) {
        int nextItem = 0;
        List<String> shown = new ArrayList<>();
        for (String id : startedItems) {
            StepItemIds.Parsed item = StepItemIds.parse(id).orElse(null);
            if (item == null || !item.runId().equals(runId) || item.step() != step) {
                continue;
            }
            // {n}: the step's items; {n}-out: the outputs its calls got when it failed, taken back with it
            if (item.kind() == StepItemIds.Kind.ITEM) {
                nextItem = Math.max(nextItem, (int) item.index() + 1);
            } else if (item.kind() != StepItemIds.Kind.ABANDONED_OUTPUT) {
                continue;
            }
            if (!withdrawnItems.contains(id)) {
                shown.add(id);
            }
        }
        return nextItem == 0 ? null : new Interrupted(step, nextItem, shown);
    }
}
