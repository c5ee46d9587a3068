package io.turnstream.gateway.loop;

import io.turnstream.gateway.provider.StepOutcome;
import io.turnstream.model.ErrorInfo;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamPayload.Usage;
import io.turnstream.runtime.Settings;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How many tokens each model reads in one request (its context window), and how full a request
 * was. A model's window is the entry whose name is the longest prefix of the model id; configure
 * with {@code turnstream.gateway.context-window.<model prefix>=<tokens>}. A model in no entry gets
 * the default window ({@code turnstream.gateway.compaction.default-context-window}).
 */
final class ContextWindows {

    static final String PREFIX = LoopConfig.PREFIX + "context-window.";
    static final long DEFAULT_WINDOW = 128_000;

    /** Published windows at the time of writing; override them in the config file when they change. */
    private static final Map<String, Long> DEFAULTS = Map.ofEntries(
            Map.entry("claude", 200_000L),
            Map.entry("gpt-5", 400_000L),
            Map.entry("gpt-4.1", 1_047_576L),
            Map.entry("gpt-4o", 128_000L),
            Map.entry("gpt-4-turbo", 128_000L),
            Map.entry("o1", 200_000L),
            Map.entry("o3", 200_000L),
            Map.entry("o4", 200_000L),
            Map.entry("turnstream-simulated", 200_000L));

    /** Anthropic says "prompt is too long: 208310 tokens > 200000 maximum". */
    private static final Pattern TOKENS_OVER = Pattern.compile("(\\d+) tokens > \\d+");

    private final ModelTable<Long> windows;
    private final long unknownModel;

    private ContextWindows(ModelTable<Long> windows, long unknownModel) {
        this.windows = windows;
        this.unknownModel = unknownModel;
    }

    static ContextWindows from(Settings settings, long unknownModel) {
        return new ContextWindows(ModelTable.from(settings, PREFIX, DEFAULTS, ContextWindows::parse), unknownModel);
    }

    private static Long parse(String key, String value) {
        try {
            long tokens = Long.parseLong(value.strip());
            if (tokens > 0) {
                return tokens;
            }
        } catch (NumberFormatException e) {
            // said below
        }
        throw new IllegalArgumentException(key + " must be a positive number of tokens, got '" + value + "'");
    }

    /** The model's context window in tokens. */
    long of(String model) {
        return windows.lookup(model).orElse(unknownModel);
    }

    /**
     * The context a step filled: its whole prompt (cached input included) and its output, which the
     * next request carries too.
     */
    static long used(Usage usage) {
        return usage.promptTokens() + usage.completionTokens();
    }

    /**
     * Whether a model call was refused because its prompt does not fit the window: Anthropic's
     * {@code invalid_request_error} "prompt is too long", OpenAI's {@code context_length_exceeded}.
     * Only a call that published nothing counts: one that failed mid-stream is not called again.
     */
    static boolean overflowed(StepOutcome outcome) {
        if (outcome.status() != ResponseStatus.ERROR || outcome.error() == null || outcome.itemsPublished() > 0) {
            return false;
        }
        ErrorInfo error = outcome.error();
        String code = error.code() == null ? "" : error.code().toLowerCase(Locale.ROOT);
        String message = error.message() == null ? "" : error.message().toLowerCase(Locale.ROOT);
        return code.equals("context_length_exceeded")
                || code.contains("invalid_request") && (message.contains("prompt is too long")
                        || message.contains("exceed context limit") || message.contains("maximum context length"));
    }

    /** The prompt size the provider reported with an overflow, or the window when it said none. */
    long overflowTokens(String model, ErrorInfo error) {
        Matcher tokens = TOKENS_OVER.matcher(error.message() == null ? "" : error.message());
        return tokens.find() ? Long.parseLong(tokens.group(1)) : of(model);
    }
}
