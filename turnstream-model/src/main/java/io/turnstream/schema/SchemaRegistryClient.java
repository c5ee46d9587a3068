package io.turnstream.schema;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.model.Json;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.avro.Schema;
import org.apache.avro.SchemaParseException;

/**
 * A small client of the Confluent Schema Registry REST API: registers or looks up a subject's
 * schema to get its id, and fetches a schema by id. Answers are cached for the life of the client
 * (ids are immutable in a registry), so steady-state encoding and decoding make no HTTP calls.
 * Several comma-separated URLs are tried in order when one cannot be reached.
 */
public final class SchemaRegistryClient {

    public static final String URL_CONFIG = "schema.registry.url";
    /** {@code user:password} for HTTP basic authentication, as Confluent's clients name it. */
    public static final String BASIC_AUTH_USER_INFO_CONFIG = "basic.auth.user.info";

    private static final String MEDIA_TYPE = "application/vnd.schemaregistry.v1+json";
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    /** The registry's {@code error_code} for a schema (id) it does not have. */
    private static final int SCHEMA_NOT_FOUND = 40403;

    private final List<URI> baseUrls;
    private final String authorization;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private final Map<SubjectSchema, Integer> idsBySubjectSchema = new ConcurrentHashMap<>();
    private final Map<Integer, Schema> schemasById = new ConcurrentHashMap<>();

    private record SubjectSchema(String subject, Schema schema) {
    }

    /**
     * @param urls one or more registry base URLs, comma separated
     * @param basicAuthUserInfo {@code user:password}, or null for no authentication
     */
    public SchemaRegistryClient(String urls, String basicAuthUserInfo) {
        if (urls == null || urls.isBlank()) {
            throw new IllegalArgumentException(URL_CONFIG + " is not set");
        }
        this.baseUrls = Arrays.stream(urls.split(",")).map(String::strip).filter(u -> !u.isEmpty())
                .map(u -> URI.create(u.endsWith("/") ? u : u + "/")).toList();
        this.authorization = basicAuthUserInfo == null || basicAuthUserInfo.isBlank() ? null
                : "Basic " + Base64.getEncoder().encodeToString(basicAuthUserInfo.getBytes(StandardCharsets.UTF_8));
    }

    /** Registers the schema under the subject (idempotent) and returns its global id. */
    public int register(String subject, Schema schema) {
        return idFor(subject, schema, "subjects/" + encode(subject) + "/versions");
    }

    /** The id of a schema already registered under the subject; fails with error code 40401/40403 when it is not. */
    public int lookup(String subject, Schema schema) {
        return idFor(subject, schema, "subjects/" + encode(subject));
    }

    /**
     * The schema with this id. An id the registry does not know, or whose schema is not (valid) Avro, is
     * {@link UnreadableSchemaException}: the record's fault; a registry that cannot be reached or refuses
     * otherwise is {@link SchemaRegistryException}: nobody's record's.
     */
    public Schema schemaById(int id) throws UnreadableSchemaException {
        Schema cached = schemasById.get(id);
        if (cached != null) {
            return cached;
        }
        JsonNode answer;
        try {
            answer = send("GET", "schemas/ids/" + id, null);
        } catch (SchemaRegistryException e) {
            if (e.errorCode() == SCHEMA_NOT_FOUND) {
                throw new UnreadableSchemaException("schema id " + id + " is unknown to the schema registry", e);
            }
            throw e;
        }
        String text = answer.path("schema").asText(null);
        if (text == null) {
            throw new SchemaRegistryException("schema registry answered GET schemas/ids/" + id + " without a schema: " + answer, -1, null);
        }
        if (answer.hasNonNull("schemaType") && !"AVRO".equals(answer.get("schemaType").asText())) {
            throw new UnreadableSchemaException("schema id " + id + " is a " + answer.get("schemaType").asText()
                    + " schema, not Avro", null);
        }
        Schema schema;
        try {
            schema = new Schema.Parser().parse(text);
        } catch (SchemaParseException e) {
            throw new UnreadableSchemaException("schema id " + id + " is not a valid Avro schema: " + e.getMessage(), e);
        }
        schemasById.put(id, schema);
        return schema;
    }

    private int idFor(String subject, Schema schema, String path) {
        SubjectSchema key = new SubjectSchema(subject, schema);
        Integer cached = idsBySubjectSchema.get(key);
        if (cached != null) {
            return cached;
        }
        JsonNode answer = send("POST", path, Json.toString(Map.of("schema", schema.toString())));
        if (!answer.path("id").canConvertToInt()) {
            throw new SchemaRegistryException("schema registry answered POST " + path + " without an id: " + answer, -1, null);
        }
        int id = answer.get("id").asInt();
        idsBySubjectSchema.put(key, id);
        schemasById.putIfAbsent(id, schema);
        return id;
    }

    private JsonNode send(String method, String path, String body) {
        IOException lastFailure = null;
        for (URI base : baseUrls) {
            HttpRequest.Builder request = HttpRequest.newBuilder(base.resolve(path))
                    .timeout(TIMEOUT)
                    .header("Accept", MEDIA_TYPE + ", application/json")
                    .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                            : HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
            if (body != null) {
                request.header("Content-Type", MEDIA_TYPE);
            }
            if (authorization != null) {
                request.header("Authorization", authorization);
            }
            HttpResponse<String> response;
            try {
                response = http.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            } catch (IOException unreachable) {
                lastFailure = unreachable;
                continue;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new SchemaRegistryException("interrupted while calling the schema registry", -1, e);
            }
            return answerOf(method + " " + base.resolve(path), response);
        }
        String reason = lastFailure instanceof ConnectException ? "connection refused" : String.valueOf(lastFailure);
        throw new SchemaRegistryException("schema registry " + baseUrls + " cannot be reached (" + reason + ")", -1, lastFailure);
    }

    private static JsonNode answerOf(String call, HttpResponse<String> response) {
        JsonNode body;
        try {
            body = Json.MAPPER.readTree(response.body());
        } catch (IOException notJson) {
            body = null;
        }
        if (response.statusCode() / 100 == 2 && body != null && body.isObject()) {
            return body;
        }
        int errorCode = body != null && body.path("error_code").canConvertToInt()
                ? body.get("error_code").asInt() : response.statusCode();
        String message = body != null && body.hasNonNull("message") ? body.get("message").asText() : response.body();
        throw new SchemaRegistryException("schema registry refused " + call + ": HTTP " + response.statusCode()
                + ", error_code " + errorCode + ": " + message, errorCode, null);
    }

    private static String encode(String subject) {
        return URLEncoder.encode(subject, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
