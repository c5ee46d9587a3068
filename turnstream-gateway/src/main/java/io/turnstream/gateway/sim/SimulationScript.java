package io.turnstream.gateway.sim;

import io.turnstream.model.Json;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Decides, per request, what the simulated provider answers, from the conversation so far. */
@FunctionalInterface
public interface SimulationScript {

    SimulatedReply reply(SimulatedRequest request);

    /** A short thinking block, then {@code tokens} tokens of plain text: for benchmarks. */
    static SimulationScript longAnswer(int tokens) {
        return request -> SimulatedReply.answer()
                .thinking("A long answer was asked for; no tools are needed.")
                .text(SimulatedText.words(tokens));
    }

    /**
     * The demo's agent. With {@code read_file} offered: reads the file the prompt names, or lists the
     * workspace root and reads the README (or first file) it finds, then answers from the file's
     * content. Without tools: a long answer of {@code answerTokens} tokens. Asked for a summary of the
     * conversation, it gives one.
     */
    static SimulationScript workspaceTour(int answerTokens) {
        return new WorkspaceTour(answerTokens);
    }

    /** The demo script; see {@link #workspaceTour(int)}. */
    final class WorkspaceTour implements SimulationScript {

        private static final Pattern PATH = Pattern.compile("\\b[\\w][\\w./-]+\\.[A-Za-z0-9]{1,8}\\b");

        private final int answerTokens;

        private WorkspaceTour(int answerTokens) {
            this.answerTokens = answerTokens;
        }

        @Override
        public SimulatedReply reply(SimulatedRequest request) {
            if (request.asksForSummary()) {
                return SimulatedReply.summaryOf(request);
            }
            List<SimulatedRequest.ToolResultView> results = request.lastToolResults();
            if (!results.isEmpty()) {
                return afterTool(request, results.get(0));
            }
            String prompt = request.lastUserText() == null ? "" : request.lastUserText();
            if (request.offers("read_file")) {
                String path = firstPath(prompt);
                if (path != null) {
                    return SimulatedReply.answer()
                            .thinking("The question is about " + path + ". I should read it before answering.")
                            .text("I'll read " + path + " first.")
                            .toolUse("read_file", Json.MAPPER.createObjectNode().put("path", path));
                }
                if (request.offers("list_files")) {
                    return SimulatedReply.answer()
                            .thinking("I don't know this workspace yet; listing its root is the first step.")
                            .text("Let me look around the workspace.")
                            .toolUse("list_files", Json.MAPPER.createObjectNode().put("path", "."));
                }
            }
            return longAnswer(answerTokens).reply(request);
        }

        private SimulatedReply afterTool(SimulatedRequest request, SimulatedRequest.ToolResultView result) {
            if (result.error()) {
                return SimulatedReply.answer().text("The " + result.toolName() + " tool failed: " + result.content());
            }
            if ("list_files".equals(result.toolName()) && request.offers("read_file")) {
                String file = pickFile(result.content());
                if (file != null) {
                    return SimulatedReply.answer()
                            .thinking("The listing shows " + file + "; reading it will tell me what this workspace is about.")
                            .text("Let me read " + file + ".")
                            .toolUse("read_file", Json.MAPPER.createObjectNode().put("path", file));
                }
                return SimulatedReply.answer().text("The workspace holds no file I can read. Its listing:\n\n" + result.content());
            }
            String path = result.input() == null ? "the file" : result.input().path("path").asText("the file");
            String[] lines = result.content().split("\n", -1);
            String firstLine = "";
            for (String line : lines) {
                if (!line.isBlank()) {
                    firstLine = line.strip();
                    break;
                }
            }
            if (firstLine.length() > 200) {
                firstLine = firstLine.substring(0, 200) + "…";
            }
            return SimulatedReply.answer().text("`" + path + "` has " + lines.length + " lines. It begins with:\n\n> "
                    + firstLine + "\n\n(This answer comes from Turnstream's simulated provider, which read the file "
                    + "through the tool executor.)");
        }

        private static String firstPath(String text) {
            Matcher matcher = PATH.matcher(text);
            return matcher.find() ? matcher.group() : null;
        }

        /** A README if the listing has one, else its first file. */
        private static String pickFile(String listing) {
            Matcher matcher = PATH.matcher(listing);
            String first = null;
            while (matcher.find()) {
                String candidate = matcher.group();
                String name = candidate.substring(candidate.lastIndexOf('/') + 1);
                if (name.toLowerCase(java.util.Locale.ROOT).startsWith("readme")) {
                    return candidate;
                }
                if (first == null) {
                    first = candidate;
                }
            }
            return first;
        }
    }
}
