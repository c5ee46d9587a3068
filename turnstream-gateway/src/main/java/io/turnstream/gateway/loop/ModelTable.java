package io.turnstream.gateway.loop;

import io.turnstream.runtime.Settings;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiFunction;

/**
 * Per-model values (prices, context windows) found by the longest prefix of the model id, so an
 * entry {@code claude-sonnet-4} covers {@code claude-sonnet-4-5-20250929}. Built from defaults
 * overridden by the config keys {@code <prefix><model prefix>=<value>}.
 */
final class ModelTable<V> {

    private final Map<String, V> entries;

    ModelTable(Map<String, V> entries) {
        this.entries = Map.copyOf(entries);
    }

    /** @param parse turns a key and its value into an entry, or throws IllegalArgumentException saying what is wrong */
    static <V> ModelTable<V> from(Settings settings, String prefix, Map<String, V> defaults,
                                  BiFunction<String, String, V> parse) {
        Map<String, V> entries = new HashMap<>(defaults);
        for (String key : settings.all().stringPropertyNames()) {
            if (key.startsWith(prefix)) {
                entries.put(key.substring(prefix.length()), parse.apply(key, settings.get(key, "")));
            }
        }
        return new ModelTable<>(entries);
    }

    Optional<V> lookup(String model) {
        return entries.entrySet().stream()
                .filter(entry -> model.startsWith(entry.getKey()))
                .max(Comparator.comparingInt(entry -> entry.getKey().length()))
                .map(Map.Entry::getValue);
    }
}
