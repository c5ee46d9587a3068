package io.turnstream.gateway.provider;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.turnstream.gateway.sse.SseEvent;
import io.turnstream.gateway.sse.SseReader;
import io.turnstream.model.ErrorInfo;
import io.turnstream.model.Json;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamPayload.Usage;
import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes a step's streamed model call over HTTP and reads it through the adapter's normalizer. Never
 * throws: HTTP errors, broken connections, stalls and cancels all come back as a
 * {@link StepOutcome}, with open items closed. Retrying is the caller's decision.
 */
public final class ProviderClient implements ModelCaller {

    private static final Logger LOG = LoggerFactory.getLogger(ProviderClient.class);

    private static final int ERROR_BODY_LIMIT = 64 * 1024;

    /** How often one step is resumed after a pause before it ends as paused; the API pauses after 10 server tool iterations. */
    static final int PAUSE_RESUMES = 5;

    private final HttpClient http;
    private final StallWatchdog watchdog;
    private final Duration stallTimeout;

    /** @param stallTimeout how long without a byte (or without response headers) before the call is abandoned */
    public ProviderClient(HttpClient http, StallWatchdog watchdog, Duration stallTimeout) {
        this.http = http;
        this.watchdog = watchdog;
        this.stallTimeout = stallTimeout;
    }

    /** An HTTP/1.1 client: streamed responses need nothing more, and loopback servers need no h2c upgrade. */
    public static HttpClient defaultHttpClient() {
        return HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(10))
                .followRedirects(HttpClient.Redirect.NEVER)
                .build();
    }

    /**
     * One step: a model call, and, when the provider paused it ({@link FinishReasons#PAUSE_TURN}, a
     * long server-tool turn), more calls that send the paused content back so the model goes on where
     * it stopped, up to {@link #PAUSE_RESUMES} times. The step's items, tool calls, content and usage
     * are those of all its calls.
     */
    @Override
    public StepOutcome call(ProviderAdapter adapter, ProviderEndpoint endpoint, ModelRequest request,
                            StepItems items, CancelSignal cancel) {
        StepOutcome outcome = callOnce(adapter, endpoint, request, items, cancel);
        for (int resumed = 0; resumed < PAUSE_RESUMES && paused(outcome) && !cancel.isCancelled(); resumed++) {
            List<Conversation.Entry> sent = new ArrayList<>(request.conversation());
            sent.add(new Conversation.AssistantNative(outcome.assistantContent()));
            LOG.info("the provider paused the step; sending its content back to let it continue");
            StepOutcome next = callOnce(adapter, endpoint, new ModelRequest(request.model(), request.system(), sent,
                    request.tools(), request.maxTokens(), request.thinkingBudget()), items, cancel);
            outcome = joined(outcome, next);
        }
        return outcome;
    }

    private static boolean paused(StepOutcome outcome) {
        return outcome.status() == ResponseStatus.COMPLETE && FinishReasons.PAUSE_TURN.equals(outcome.finishReason())
                && outcome.assistantContent().isArray();
    }

    /** A paused call and its continuation as one: the content the API expects back is both in order. */
    private static StepOutcome joined(StepOutcome paused, StepOutcome next) {
        ArrayNode content = ((ArrayNode) paused.assistantContent()).deepCopy();
        if (next.assistantContent().isArray()) {
            content.addAll((ArrayNode) next.assistantContent());
        }
        Usage usage = paused.usage() == null ? next.usage()
                : next.usage() == null ? paused.usage() : paused.usage().plus(next.usage());
        return new StepOutcome(next.status(), next.finishReason(), usage, next.toolCalls(), content, next.error(),
                next.retryable(), next.overloaded(), next.retryAfter(), next.itemsPublished());
    }

    private StepOutcome callOnce(ProviderAdapter adapter, ProviderEndpoint endpoint, ModelRequest request,
                                 StepItems items, CancelSignal cancel) {
        StreamNormalizer normalizer = adapter.normalizer(items);
        HttpRequest httpRequest = adapter.request(request, endpoint).timeout(stallTimeout).build();
        CompletableFuture<HttpResponse<InputStream>> pending =
                http.sendAsync(httpRequest, HttpResponse.BodyHandlers.ofInputStream());
        HttpResponse<InputStream> response;
        try (CancelSignal.Registration abandon = cancel.onCancel(() -> pending.cancel(true))) {
            response = pending.get();
        } catch (ExecutionException e) {
            return failedToConnect(normalizer, e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return normalizer.interrupt(ResponseStatus.ABORTED, null, false);
        } catch (CancellationException e) {
            return normalizer.interrupt(ResponseStatus.ABORTED, null, false);
        }
        InputStream body = response.body();
        Runnable hangUp = () -> closeQuietly(body);
        try (body;
             StallWatchdog.Watched watched = watchdog.watch(body, stallTimeout, hangUp);
             CancelSignal.Registration onCancel = cancel.onCancel(hangUp)) {
            try {
                if (response.statusCode() / 100 != 2) {
                    return httpError(response.statusCode(), response.headers(), readLimited(watched), items);
                }
                return stream(normalizer, watched, cancel);
            } catch (IOException e) {
                return broken(normalizer, cancel, watched.stalled(), e);
            } catch (RuntimeException bug) {
                // a defect in reading an event must end this step, not the turn's thread
                LOG.error("cannot process the provider's stream", bug);
                return normalizer.interrupt(ResponseStatus.ERROR, ErrorInfo.of(ErrorCodes.INTERNAL,
                        "the gateway could not process the provider's stream: " + describe(bug)), false);
            }
        } catch (IOException closing) {
            return normalizer.end();
        }
    }

    /** Feeds events to the normalizer until its terminal event, the end of the body, or a cancel. */
    private static StepOutcome stream(StreamNormalizer normalizer, InputStream body, CancelSignal cancel)
            throws IOException {
        SseReader reader = new SseReader(body);
        SseEvent event;
        while (!normalizer.terminated() && !cancel.isCancelled() && (event = reader.next()) != null) {
            normalizer.accept(event);
        }
        if (cancel.isCancelled() && !normalizer.terminated()) {
            return normalizer.interrupt(ResponseStatus.ABORTED, null, false);
        }
        return normalizer.end();
    }

    private StepOutcome broken(StreamNormalizer normalizer, CancelSignal cancel, boolean stalled, IOException e) {
        if (cancel.isCancelled()) {
            return normalizer.interrupt(ResponseStatus.ABORTED, null, false);
        }
        if (stalled) {
            return normalizer.interrupt(ResponseStatus.ERROR, stallError(), true);
        }
        return normalizer.interrupt(ResponseStatus.ERROR, ErrorInfo.of(ErrorCodes.CONNECTION_FAILED,
                "the connection to the provider broke: " + describe(e)), true);
    }

    private StepOutcome failedToConnect(StreamNormalizer normalizer, Throwable cause) {
        if (cause instanceof HttpTimeoutException) {
            return normalizer.interrupt(ResponseStatus.ERROR, stallError(), true);
        }
        return normalizer.interrupt(ResponseStatus.ERROR, ErrorInfo.of(ErrorCodes.CONNECTION_FAILED,
                "cannot reach the provider: " + describe(cause)), true);
    }

    private ErrorInfo stallError() {
        return ErrorInfo.of(ErrorCodes.STREAM_STALLED, "the provider sent nothing for " + stallTimeout.toMillis()
                + " ms; the model call was abandoned");
    }

    /**
     * A non-2xx answer. Anthropic ({@code {type:error, error:{type, message}}}) and OpenAI
     * ({@code {error:{message, type, code}}}) both nest the error under {@code error}.
     */
    private static StepOutcome httpError(int status, HttpHeaders headers, String body, StepItems items) {
        String type = null;
        String message = null;
        try {
            JsonNode error = Json.MAPPER.readTree(body).path("error");
            type = StreamNormalizer.text(error, "type");
            String code = StreamNormalizer.text(error, "code");
            type = code != null && (type == null || "invalid_request_error".equals(type)) ? code : type;
            message = StreamNormalizer.text(error, "message");
        } catch (IOException notJson) {
            // a proxy's HTML page, say: the status line says enough
        }
        String code = type != null ? type : "HTTP_" + status;
        String text = "the provider answered HTTP " + status + (message != null ? ": " + message : "");
        boolean overloaded = status == 529 || ErrorCodes.overloadedType(type);
        boolean retryable = status == 408 || status == 409 || status == 429 || status >= 500 || overloaded;
        return StepOutcome.refused(ErrorInfo.of(code, text), retryable, overloaded, retryAfter(headers),
                items.published());
    }

    /** {@code retry-after-ms} (OpenAI) or {@code retry-after} in seconds; HTTP dates are ignored. */
    static Duration retryAfter(HttpHeaders headers) {
        try {
            var millis = headers.firstValue("retry-after-ms");
            if (millis.isPresent()) {
                return Duration.ofMillis((long) Double.parseDouble(millis.get().trim()));
            }
            var seconds = headers.firstValue("retry-after");
            if (seconds.isPresent()) {
                return Duration.ofMillis((long) (Double.parseDouble(seconds.get().trim()) * 1000));
            }
        } catch (NumberFormatException httpDate) {
            // fall back to our own backoff
        }
        return null;
    }

    private static String readLimited(InputStream body) throws IOException {
        return new String(body.readNBytes(ERROR_BODY_LIMIT), StandardCharsets.UTF_8);
    }

    private static String describe(Throwable e) {
        String message = e.getMessage();
        String name = e.getClass().getSimpleName().toLowerCase(Locale.ROOT).replace("exception", "");
        return message == null || message.isBlank() ? name : message;
    }

    private static void closeQuietly(InputStream in) {
        try {
            in.close();
        } catch (IOException ignored) {
            // closing is how a stall or cancel hangs up; a failure to close changes nothing
        }
    }
}
