package io.turnstream.gateway.provider;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;

/**
 * What has been said in a turn so far, provider-neutral except for the assistant's own steps: those
 * are kept exactly as the provider sent them (thinking signatures, encrypted reasoning, server tool
 * blocks) so they can be sent back verbatim on the next step.
 */
public final class Conversation {

    /** One entry of the conversation. */
    public sealed interface Entry {
    }

    /** A user message: its text and the files attached to it (none for most). */
    public record UserText(String text, List<FilePart> files) implements Entry {
        public UserText {
            files = files == null ? List.of() : List.copyOf(files);
        }

        public UserText(String text) {
            this(text, List.of());
        }
    }

    /**
     * A file attached to a user message, an image or a PDF, validated where the request was read
     * ({@link io.turnstream.gateway.turn.FileParts}).
     *
     * @param url a {@code data:} URL holding the file (base64), or an {@code https} URL the provider fetches (images)
     * @param filename null when the client gave none
     */
    public record FilePart(String mediaType, String url, String filename) {

        public boolean inline() {
            return url.startsWith("data:");
        }

        /** The base64 data of an inline file. */
        public String base64() {
            return url.substring(url.indexOf(',') + 1);
        }

        public boolean image() {
            return mediaType.startsWith("image/");
        }

        /** Its file name, or one made of its media type ({@code file.pdf}) for the protocols that want one. */
        public String nameOrDefault() {
            return filename != null ? filename : "file." + mediaType.substring(mediaType.indexOf('/') + 1);
        }

        /** Without the data: a file's bytes never go to a log or an exception message. */
        @Override
        public String toString() {
            return "FilePart[" + mediaType + (filename == null ? "" : ", " + filename) + ", "
                    + (inline() ? url.length() + " characters inline" : "by URL") + "]";
        }
    }

    /** Assistant text from the caller's history (not produced in this turn). */
    public record AssistantText(String text) implements Entry {
    }

    /**
     * Assistant tool calls from the caller's history (a client-side tool's call, sent back with its
     * result by an OpenAI-compatible client), with the text said before them, if any.
     */
    public record AssistantToolCalls(String text, List<ToolCall> calls) implements Entry {
        public AssistantToolCalls {
            calls = List.copyOf(calls);
        }
    }

    /** @param arguments the call's arguments, a JSON object */
    public record ToolCall(String callId, String name, JsonNode arguments) {
    }

    /**
     * An earlier turn of the thread by its id, as a client that keeps the conversation sends it back (a useChat
     * assistant message, whose id is the turn id): the gateway puts that turn's steps in its place (tool calls,
     * results, reasoning, from Kafka) before the model sees it; {@code text} is what the client showed, said as
     * plain assistant text when Kafka no longer holds the turn.
     */
    public record EarlierTurn(String turnId, String text) implements Entry {
    }

    /** An assistant step of this turn, in the wire shape of the adapter that produced it. */
    public record AssistantNative(JsonNode content) implements Entry {
    }

    /** The results of one step's tool calls, in the order the model asked for them. */
    public record ToolOutputs(List<ToolOutput> outputs) implements Entry {
        public ToolOutputs {
            outputs = List.copyOf(outputs);
        }
    }

    /** @param text what the model reads: the tool's output, or its error */
    public record ToolOutput(String callId, String toolName, String text, boolean success) {
    }

    /** What an adapter does with each kind of entry when it renders a request. */
    public interface Renderer {
        void user(String text, List<FilePart> files);

        void assistant(String text);

        void assistantNative(JsonNode content);

        void assistantToolCalls(String text, List<ToolCall> calls);

        void toolOutputs(List<ToolOutput> outputs);
    }

    /**
     * Renders plain text turns as {@code {role, content}} objects, the shape every protocol accepts; a user message
     * with files as a list of content parts, the files first (as Anthropic advises for images) in the protocol's shape.
     */
    public abstract static class RoleMessages implements Renderer {
        protected final ArrayNode out;

        protected RoleMessages(ArrayNode out) {
            this.out = out;
        }

        @Override
        public void user(String text, List<FilePart> files) {
            if (files.isEmpty()) {
                out.addObject().put("role", "user").put("content", text);
                return;
            }
            ArrayNode content = out.addObject().put("role", "user").putArray("content");
            files.forEach(file -> content.add(filePart(file)));
            if (!text.isEmpty()) {
                content.addObject().put("type", textPartType()).put("text", text);
            }
        }

        /** A file as a content part of the protocol. */
        protected abstract ObjectNode filePart(FilePart file);

        protected String textPartType() {
            return "text";
        }

        @Override
        public void assistant(String text) {
            out.addObject().put("role", "assistant").put("content", text);
        }
    }

    public static void render(List<Entry> entries, Renderer renderer) {
        for (Entry entry : entries) {
            if (entry instanceof UserText user) {
                renderer.user(user.text(), user.files());
            } else if (entry instanceof AssistantText assistant) {
                renderer.assistant(assistant.text());
            } else if (entry instanceof EarlierTurn earlier && !earlier.text().isBlank()) {
                renderer.assistant(earlier.text());
            } else if (entry instanceof AssistantToolCalls calls) {
                renderer.assistantToolCalls(calls.text(), calls.calls());
            } else if (entry instanceof AssistantNative step) {
                renderer.assistantNative(step.content());
            } else if (entry instanceof ToolOutputs results) {
                renderer.toolOutputs(results.outputs());
            }
        }
    }

    private final List<Entry> entries = new ArrayList<>();

    public Conversation(List<Entry> history) {
        entries.addAll(history);
    }

    public synchronized void add(Entry entry) {
        entries.add(entry);
    }

    /** Replaces everything said so far, e.g. with a summary and the latest steps once it was compacted. */
    public synchronized void replace(List<Entry> compacted) {
        entries.clear();
        entries.addAll(compacted);
    }

    public synchronized List<Entry> entries() {
        return List.copyOf(entries);
    }
}
