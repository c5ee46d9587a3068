package io.turnstream.schema;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.turnstream.model.Json;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.avro.Schema;
import org.apache.avro.SchemaCompatibility;
import org.apache.avro.SchemaParseException;

/**
 * A Schema Registry over real HTTP on loopback implementing the documented requests and responses
 * we rely on: register ({@code POST /subjects/{s}/versions -> {"id":N}}, same schema same id,
 * BACKWARD check against the subject's latest version, 409 otherwise), look up
 * ({@code POST /subjects/{s}}), fetch by id ({@code GET /schemas/ids/{id}}), and error bodies
 * {@code {"error_code":..,"message":..}}. {@link #storeAsIs} keeps schemas no Avro parser accepts (another
 * type's, an invalid one), as a registry holding other producers' schemas does.
 */
public final class FakeSchemaRegistry implements AutoCloseable {

    private static final Pattern REGISTER = Pattern.compile("/subjects/([^/]+)/versions");
    private static final Pattern LOOKUP = Pattern.compile("/subjects/([^/]+)");
    private static final Pattern BY_ID = Pattern.compile("/schemas/ids/(\\d+)");
    private static final String MEDIA_TYPE = "application/vnd.schemaregistry.v1+json";

    private final HttpServer server;
    private final String requiredAuthorization;
    private final Map<Integer, Schema> schemasById = new ConcurrentHashMap<>();
    /** The answers to {@code GET /schemas/ids/{id}} of the schemas stored as they are. */
    private final Map<Integer, Map<String, String>> storedAsIs = new ConcurrentHashMap<>();
    private final Map<String, List<Integer>> versionsBySubject = new LinkedHashMap<>();
    private final Map<String, AtomicInteger> requestCounts = new ConcurrentHashMap<>();

    private FakeSchemaRegistry(String userInfo) throws IOException {
        this.requiredAuthorization = userInfo == null ? null
                : "Basic " + Base64.getEncoder().encodeToString(userInfo.getBytes(StandardCharsets.UTF_8));
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", this::handle);
        server.start();
    }

    public static FakeSchemaRegistry start() throws IOException {
        return new FakeSchemaRegistry(null);
    }

    /** A registry that answers 401 unless the request carries these basic-auth credentials. */
    static FakeSchemaRegistry requiringBasicAuth(String userInfo) throws IOException {
        return new FakeSchemaRegistry(userInfo);
    }

    public String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** How many requests of a kind ("register", "lookup", "byId") the registry answered. */
    public int requests(String kind) {
        return requestCounts.getOrDefault(kind, new AtomicInteger()).get();
    }

    /** Registers directly, as another producer or an operator would. */
    public synchronized int register(String subject, Schema schema) {
        List<Integer> versions = versionsBySubject.computeIfAbsent(subject, s -> new ArrayList<>());
        for (int id : versions) {
            if (schemasById.get(id).equals(schema)) {
                return id;
            }
        }
        if (!versions.isEmpty()) {
            Schema latest = schemasById.get(versions.get(versions.size() - 1));
            if (SchemaCompatibility.checkReaderWriterCompatibility(schema, latest).getType()
                    != SchemaCompatibility.SchemaCompatibilityType.COMPATIBLE) {
                throw new Refused(409, 409, "Schema being registered is incompatible with an earlier schema for subject \""
                        + subject + "\"");
            }
        }
        int id = schemasById.entrySet().stream().filter(e -> e.getValue().equals(schema)).map(Map.Entry::getKey)
                .findFirst().orElse(nextId());
        schemasById.put(id, schema);
        versions.add(id);
        return id;
    }

    /**
     * Stores a schema text of a type ({@code AVRO}, {@code PROTOBUF}, {@code JSON}) under a new id without parsing
     * it, as a registry does for types other than Avro; served by id with its {@code schemaType}.
     */
    public synchronized int storeAsIs(String schemaType, String schemaText) {
        int id = nextId();
        storedAsIs.put(id, Map.of("schema", schemaText, "schemaType", schemaType));
        return id;
    }

    private int nextId() {
        return schemasById.size() + storedAsIs.size() + 1;
    }

    @Override
    public void close() {
        server.stop(0);
    }

    private static final class Refused extends RuntimeException {
        final int status;
        final int errorCode;

        Refused(int status, int errorCode, String message) {
            super(message);
            this.status = status;
            this.errorCode = errorCode;
        }
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            try {
                respond(exchange, 200, route(exchange));
            } catch (Refused refused) {
                respond(exchange, refused.status,
                        Map.of("error_code", refused.errorCode, "message", refused.getMessage()));
            }
        }
    }

    private Object route(HttpExchange exchange) throws IOException {
        if (requiredAuthorization != null
                && !requiredAuthorization.equals(exchange.getRequestHeaders().getFirst("Authorization"))) {
            throw new Refused(401, 401, "Unauthorized");
        }
        String method = exchange.getRequestMethod();
        String path = exchange.getRequestURI().getRawPath();
        Matcher m;
        if (method.equals("POST") && (m = REGISTER.matcher(path)).matches()) {
            count("register");
            return Map.of("id", register(subject(m), schemaOf(exchange)));
        }
        if (method.equals("POST") && (m = LOOKUP.matcher(path)).matches()) {
            count("lookup");
            return lookup(subject(m), schemaOf(exchange));
        }
        if (method.equals("GET") && (m = BY_ID.matcher(path)).matches()) {
            count("byId");
            int id = Integer.parseInt(m.group(1));
            Schema schema = schemasById.get(id);
            if (schema == null && storedAsIs.containsKey(id)) {
                return storedAsIs.get(id);
            }
            if (schema == null) {
                throw new Refused(404, 40403, "Schema " + m.group(1) + " not found");
            }
            return Map.of("schema", schema.toString());
        }
        throw new Refused(404, 404, "HTTP 404 Not Found");
    }

    private synchronized Map<String, Object> lookup(String subject, Schema schema) {
        List<Integer> versions = versionsBySubject.get(subject);
        if (versions == null) {
            throw new Refused(404, 40401, "Subject '" + subject + "' not found.");
        }
        for (int i = 0; i < versions.size(); i++) {
            if (schemasById.get(versions.get(i)).equals(schema)) {
                return Map.of("subject", subject, "id", versions.get(i), "version", i + 1, "schema", schema.toString());
            }
        }
        throw new Refused(404, 40403, "Schema not found");
    }

    private static String subject(Matcher m) {
        return URLDecoder.decode(m.group(1), StandardCharsets.UTF_8);
    }

    private static Schema schemaOf(HttpExchange exchange) throws IOException {
        String contentType = exchange.getRequestHeaders().getFirst("Content-Type");
        if (contentType == null || !(contentType.startsWith(MEDIA_TYPE) || contentType.startsWith("application/json"))) {
            throw new Refused(415, 415, "HTTP 415 Unsupported Media Type");
        }
        JsonNode body = Json.MAPPER.readTree(exchange.getRequestBody());
        try {
            return new Schema.Parser().parse(body.path("schema").asText());
        } catch (SchemaParseException e) {
            throw new Refused(422, 42201, "Invalid schema: " + e.getMessage());
        }
    }

    private void count(String kind) {
        requestCounts.computeIfAbsent(kind, k -> new AtomicInteger()).incrementAndGet();
    }

    private static void respond(HttpExchange exchange, int status, Object body) throws IOException {
        byte[] bytes = Json.toBytes(body);
        exchange.getResponseHeaders().set("Content-Type", MEDIA_TYPE);
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }
}
