package io.turnstream.demo;

import io.turnstream.model.ChangeType;
import io.turnstream.model.Origins;
import io.turnstream.model.UIStatus;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UiItemType;
import io.turnstream.model.UiPayloadType;
import io.turnstream.model.UpsertEnvelope;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.TopicReader;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * Prints {@code llm.upserts} as it arrives, one compact line per record: turn events, and for each
 * item its change type, version and what its content gained since its previous upsert, so the
 * topology's batching shows. Also tells when a turn has finished.
 */
final class UpsertPrinter implements AutoCloseable {

    private static final int SHOWN_CHARS = 72;

    private final PrintWriter out;
    private final WireFormat format;
    /** item id -> content length at its previous upsert */
    private final Map<String, Integer> printedLength = new HashMap<>();
    private final Map<String, CompletableFuture<UITurnEvent>> finished = new ConcurrentHashMap<>();
    private final Map<String, String> finalAnswers = new ConcurrentHashMap<>();
    private final TopicReader reader;

    UpsertPrinter(Properties kafkaProperties, String upsertsTopic, WireFormat format, PrintWriter out) {
        this.out = out;
        this.format = format;
        this.reader = new TopicReader("turnstream-demo-printer", kafkaProperties, List.of(upsertsTopic),
                TopicReader.Start.END, this::print);
    }

    /** Completes with the turn's {@code turn_completed} or {@code turn_error}. */
    CompletableFuture<UITurnEvent> finished(String turnId) {
        return finished.computeIfAbsent(turnId, id -> new CompletableFuture<>());
    }

    /** The content of the turn's last completed agent message, or null. */
    String finalAnswer(String turnId) {
        return finalAnswers.get(turnId);
    }

    private void print(ConsumerRecord<String, byte[]> record) {
        UpsertEnvelope envelope;
        try {
            envelope = format.read(record.topic(), record.value(), UpsertEnvelope.class);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        String line = envelope.payload() instanceof UITurnEvent event ? turnEvent(event)
                : envelope.payload() instanceof UIUpsert item ? item(item)
                : envelope.payload() instanceof UIStatus status ? status(status) : "(no payload)";
        synchronized (out) {
            out.printf("  %s seq %3d  %s%n", shortId(envelope.turnId()), envelope.seq(), line);
            out.flush();
        }
        if (envelope.payload() instanceof UITurnEvent event && event.type() != UiPayloadType.TURN_STARTED) {
            finished(envelope.turnId()).complete(event);
        }
    }

    private static String turnEvent(UITurnEvent event) {
        StringBuilder line = new StringBuilder(String.format("%-15s", event.type()));
        field(line, "model", event.modelId());
        field(line, "provider", event.providerId());
        field(line, "status", event.status());
        field(line, "tokens", event.usage() == null ? null : event.usage().totalTokens());
        field(line, "error", event.error() == null ? null : event.error().code() + ": " + event.error().message());
        return line.toString();
    }

    /** A turn's status (retrying, compacting, step_completed, ...) or a tool call's (pending, running, ...), by name. */
    private static String status(UIStatus status) {
        StringBuilder line = new StringBuilder(String.format("%-17s %-9s", status.type(), status.status()));
        if (status.toolName() != null) {
            line.append(' ').append(status.toolName());
        }
        field(line, "step", status.step());
        field(line, "model", status.modelId());
        field(line, "attempt", status.attempt());
        if (status.delayMs() != null) {
            line.append(" in ").append(status.delayMs()).append(" ms");
        }
        if (status.fromModel() != null || status.toModel() != null) {
            line.append(' ').append(status.fromModel()).append(" -> ").append(status.toModel());
        }
        field(line, "context", status.contextTokens() == null ? null
                : status.contextTokens() + (status.contextWindow() != null ? "/" + status.contextWindow() : ""));
        field(line, "tokens", status.usage() == null ? null : status.usage().totalTokens());
        field(line, "error", status.error() == null ? null : status.error().code() + ": " + status.error().message());
        return line.toString();
    }

    /** Appends {@code " name=value"} when there is a value. */
    private static void field(StringBuilder line, String name, Object value) {
        if (value != null) {
            line.append(' ').append(name).append('=').append(value);
        }
    }

    private String item(UIUpsert item) {
        String kind = item.itemType() + (item.itemType() == UiItemType.MESSAGE && item.origin() != null
                ? " (" + item.origin() + ")" : "");
        String head = String.format("%-17s %-9s v%-2d ", kind, item.changeType(), item.version());
        return head + switch (item.itemType()) {
            case TOOL_CALL -> item.toolName() + " " + oneLine(String.valueOf(item.toolArguments()));
            case TOOL_OUTPUT -> (Boolean.FALSE.equals(item.success()) ? "FAILED " : "ok ")
                    + outputSummary(item.toolOutput() != null && item.toolOutput().isTextual()
                            ? item.toolOutput().asText() : String.valueOf(item.toolOutput()));
            case ERROR -> item.errorCode() + ": " + item.errorMessage();
            default -> growth(item);
        };
    }

    /** What the content gained since the item's previous upsert: the batch this upsert carries. */
    private String growth(UIUpsert item) {
        String content = item.content() == null ? "" : item.content();
        int before = printedLength.getOrDefault(item.itemId(), 0);
        printedLength.put(item.itemId(), content.length());
        if (item.changeType() == ChangeType.COMPLETED && Origins.AGENT.equals(item.origin())
                && item.itemType() == UiItemType.MESSAGE) {
            finalAnswers.put(item.turnId(), content);
        }
        String added = content.length() >= before ? content.substring(before) : content;
        return String.format("+%-4d= %-5d %s", added.length(), content.length(), quoted(added));
    }

    private static String outputSummary(String output) {
        String[] lines = output.split("\n", -1);
        return quoted(lines[0]) + (lines.length > 1 ? " (" + lines.length + " lines)" : "");
    }

    private static String quoted(String text) {
        String flat = oneLine(text);
        return "\"" + (flat.length() > SHOWN_CHARS ? flat.substring(0, SHOWN_CHARS - 1) + "…" : flat) + "\"";
    }

    private static String oneLine(String text) {
        return text.replace("\n", "⏎");
    }

    private static String shortId(String turnId) {
        return turnId == null ? "?" : turnId.length() > 13 ? turnId.substring(0, 13) : turnId;
    }

    @Override
    public void close() {
        reader.close();
    }
}
