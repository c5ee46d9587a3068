package io.turnstream.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The repository's docker-compose.yml, read as data: services, their commands, ports and volume mounts. */
public final class ComposeFile {

    /** The repository root: tests run in the module's directory. */
    public static final Path ROOT = Path.of("..");

    /** A volume mounted into a service's container ({@code source:target[:ro]}). */
    public record Mount(String source, String target, boolean readOnly) {
    }

    private final JsonNode compose;

    private ComposeFile(JsonNode compose) {
        this.compose = compose;
    }

    public static ComposeFile read() {
        try {
            return new ComposeFile(new ObjectMapper(new YAMLFactory()).readTree(ROOT.resolve("docker-compose.yml").toFile()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public JsonNode root() {
        return compose;
    }

    public JsonNode service(String name) {
        JsonNode service = compose.at("/services/" + name);
        if (service.isMissingNode()) {
            throw new IllegalArgumentException("docker-compose.yml has no service " + name);
        }
        return service;
    }

    public List<String> serviceNames() {
        return fieldNames(compose.get("services"));
    }

    /** The services that run a {@code turnstream} subcommand: built from our image, with its entry point. */
    public Map<String, JsonNode> turnstreamCommands() {
        Map<String, JsonNode> ours = new LinkedHashMap<>();
        compose.get("services").fields().forEachRemaining(service -> {
            if (service.getValue().has("build") && !service.getValue().has("entrypoint")) {
                ours.put(service.getKey(), service.getValue());
            }
        });
        return ours;
    }

    public List<String> command(String service) {
        return strings(service(service).get("command"));
    }

    public List<String> entrypoint(String service) {
        return strings(service(service).get("entrypoint"));
    }

    /** The value after {@code option} in the service's command. */
    public Optional<String> option(String service, String option) {
        List<String> command = command(service);
        int at = command.indexOf(option);
        return at < 0 || at + 1 >= command.size() ? Optional.empty() : Optional.of(command.get(at + 1));
    }

    public List<String> ports(String service) {
        return strings(service(service).get("ports"));
    }

    public List<Mount> mounts(String service) {
        List<Mount> mounts = new ArrayList<>();
        for (String volume : strings(service(service).get("volumes"))) {
            String[] parts = volume.split(":");
            mounts.add(new Mount(parts[0], parts[1], parts.length > 2 && parts[2].equals("ro")));
        }
        return mounts;
    }

    /** The named volume a service mounts at exactly {@code target}. */
    public Optional<Mount> mountAt(String service, String target) {
        return mounts(service).stream().filter(mount -> mount.target().equals(target)).findFirst();
    }

    /** The services that mount the volume {@code source}. */
    public List<String> servicesMounting(String source) {
        return serviceNames().stream()
                .filter(name -> mounts(name).stream().anyMatch(mount -> mount.source().equals(source))).toList();
    }

    public static List<String> fieldNames(JsonNode node) {
        List<String> names = new ArrayList<>();
        if (node != null) {
            node.fieldNames().forEachRemaining(names::add);
        }
        return names;
    }

    private static List<String> strings(JsonNode array) {
        List<String> values = new ArrayList<>();
        if (array != null) {
            array.forEach(value -> values.add(value.asText()));
        }
        return values;
    }
}
