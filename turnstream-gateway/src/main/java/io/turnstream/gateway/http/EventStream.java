package io.turnstream.gateway.http;

import io.javalin.http.Context;
import io.turnstream.gateway.sse.SseFormat;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One {@code text/event-stream} response written without ever blocking a thread (the Servlet API's
 * non-blocking output): what is sent waits in this stream's own buffer until the client's socket takes
 * it. A sender asks {@link #writable()} before it encodes more and is called back ({@link #onWritable})
 * once the client took everything, so a client that stops reading holds only its own bytes and never a
 * thread. {@link #close} ends the response once the buffer is written; a client that never reads again
 * is cut off by Jetty's idle timeout.
 */
public final class EventStream implements WriteListener {

    private static final Logger LOG = LoggerFactory.getLogger(EventStream.class);

    private final ServletOutputStream out;
    /** Completes when the response is over; Javalin then completes the request. */
    private final CompletableFuture<Void> finished = new CompletableFuture<>();
    /** Encoded lines the socket has not taken yet; guarded by this. */
    private final ArrayDeque<byte[]> pending = new ArrayDeque<>();
    /** Bytes handed to Jetty since its last flush; guarded by this. */
    private boolean unflushed;
    /** No more sends: the response ends once {@link #pending} is written; guarded by this. */
    private boolean closing;
    private volatile boolean terminated;
    private final Runnable onClose;
    private volatile Runnable onWritable = () -> { };

    private EventStream(ServletOutputStream out, Runnable onClose) {
        this.out = out;
        this.onClose = onClose;
    }

    /**
     * Answers the request with a {@code text/event-stream} and keeps it open, asynchronously, until
     * {@link #close}.
     *
     * @param onClose runs once when the response is over, whichever way it ended
     */
    public static EventStream open(Context ctx, Runnable onClose) throws IOException {
        ctx.status(200).contentType("text/event-stream; charset=utf-8")
                .header("Cache-Control", "no-cache").header("X-Accel-Buffering", "no");
        ctx.res().flushBuffer();
        // non-blocking output needs an async request: started here, not by Javalin after the handler returns,
        // unless it already is (a route that waited for its turn runs on after an asynchronous wait)
        AsyncContext async = ctx.req().isAsyncStarted() ? ctx.req().getAsyncContext() : ctx.req().startAsync();
        async.setTimeout(0);
        EventStream stream = new EventStream(ctx.res().getOutputStream(), onClose);
        ctx.future(() -> stream.finished);
        stream.out.setWriteListener(stream);
        return stream;
    }

    /** Runs whenever the client has taken everything sent so far (from any thread; keep it short). */
    public void onWritable(Runnable callback) {
        this.onWritable = callback;
    }

    /** An unnamed event (an EventSource's {@code message}). */
    public void sendData(String data) {
        send(SseFormat.format(null, data, null));
    }

    /** An unnamed event with an id. */
    public void sendData(String data, String id) {
        send(SseFormat.format(null, data, id));
    }

    public void sendEvent(String event, String data) {
        send(SseFormat.format(event, data, null));
    }

    public void sendEvent(String event, String data, String id) {
        send(SseFormat.format(event, data, id));
    }

    public void sendComment(String comment) {
        send(SseFormat.comment(comment));
    }

    /** True when the client has taken everything sent so far: the time to encode more. */
    public synchronized boolean writable() {
        return pending.isEmpty() && !terminated;
    }

    /** True once the response is over (closed and written, or the client is gone). */
    public boolean terminated() {
        return terminated;
    }

    /** Ends the response once what was sent is written; what is sent afterwards is dropped. */
    public void close() {
        synchronized (this) {
            if (closing) {
                return;
            }
            closing = true;
        }
        pump();
    }

    private void send(byte[] line) {
        synchronized (this) {
            if (closing || terminated) {
                return;
            }
            pending.add(line);
        }
        pump();
    }

    @Override
    public void onWritePossible() {
        pump();
    }

    @Override
    public void onError(Throwable failure) {
        LOG.debug("an event stream's client is gone: {}", failure.toString());
        end();
    }

    /** Hands the client what it can take now, without waiting; Jetty calls {@link #onWritePossible} for the rest. */
    private void pump() {
        boolean drained = false;
        boolean over = false;
        synchronized (this) {
            try {
                while (!terminated && out.isReady()) {
                    byte[] next = pending.poll();
                    if (next != null) {
                        out.write(next);
                        unflushed = true;
                    } else if (unflushed) {
                        unflushed = false;
                        out.flush();
                    } else {
                        drained = !closing;
                        over = closing;
                        break;
                    }
                }
            } catch (IOException | IllegalStateException gone) {
                LOG.debug("an event stream's client is gone: {}", gone.toString());
                over = true;
            }
        }
        if (over) {
            end();
        } else if (drained) {
            onWritable.run();
        }
    }

    private void end() {
        synchronized (this) {
            if (terminated) {
                return;
            }
            terminated = true;
            closing = true;
            pending.clear();
        }
        try {
            onClose.run();
        } finally {
            finished.complete(null);
        }
    }
}
