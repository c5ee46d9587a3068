package io.turnstream.gateway.provider;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A loopback HTTP server that answers any POST under {@code /{name}/} with a recorded response body,
 * written in small flushed slices so the adapters see lines split across reads, as on a real network.
 * A name may have several bodies: the n-th request gets the n-th (the last one again after that).
 */
final class RecordedStreamServer implements AutoCloseable {

    private static final int SLICE = 97;

    private final HttpServer server;
    private final ExecutorService executor = Executors.newCachedThreadPool();
    private final Map<String, List<byte[]>> bodies = new ConcurrentHashMap<>();
    private final Map<String, List<byte[]>> requests = new ConcurrentHashMap<>();
    private final Map<String, Headers> lastHeaders = new ConcurrentHashMap<>();

    RecordedStreamServer() {
        try {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        server.createContext("/", this::serve);
        server.setExecutor(executor);
        server.start();
    }

    /** Serves {@code responses} in turn under a base URL of its own, which is returned. */
    String register(String name, byte[]... responses) {
        bodies.put(name, List.of(responses));
        requests.put(name, new CopyOnWriteArrayList<>());
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/" + name;
    }

    /** The body of the last request made under {@code name}. */
    byte[] lastRequest(String name) {
        List<byte[]> made = requests(name);
        return made.isEmpty() ? null : made.get(made.size() - 1);
    }

    /** The bodies of the requests made under {@code name}, in order. */
    List<byte[]> requests(String name) {
        return List.copyOf(requests.getOrDefault(name, List.of()));
    }

    /** The headers of the last request made under {@code name}. */
    Headers lastHeaders(String name) {
        return lastHeaders.get(name);
    }

    private void serve(HttpExchange exchange) throws IOException {
        try (exchange) {
            String name = exchange.getRequestURI().getPath().split("/")[1];
            lastHeaders.put(name, exchange.getRequestHeaders());
            List<byte[]> responses = bodies.get(name);
            if (responses == null) {
                exchange.sendResponseHeaders(404, -1);
                return;
            }
            List<byte[]> made = requests.get(name);
            try (InputStream in = exchange.getRequestBody()) {
                made.add(in.readAllBytes());
            }
            byte[] body = responses.get(Math.min(made.size(), responses.size()) - 1);
            exchange.getResponseHeaders().add("content-type", "text/event-stream");
            exchange.sendResponseHeaders(200, 0);
            OutputStream out = exchange.getResponseBody();
            for (int offset = 0; offset < body.length; offset += SLICE) {
                out.write(body, offset, Math.min(SLICE, body.length - offset));
                out.flush();
            }
        }
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
