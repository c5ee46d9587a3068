package io.turnstream.topology;

import java.util.Comparator;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.streams.TopologyDescription;

/** Renders a topology's description as a Mermaid flowchart: topics, nodes and the stores each node uses. */
public final class TopologyDiagram {

    private TopologyDiagram() {
    }

    public static String mermaid(TopologyDescription description) {
        StringBuilder out = new StringBuilder("flowchart LR\n");
        Set<String> lines = new TreeSet<>();
        description.subtopologies().stream().sorted(Comparator.comparingInt(TopologyDescription.Subtopology::id))
                .forEach(sub -> sub.nodes().forEach(node -> {
                    if (node instanceof TopologyDescription.Source source) {
                        source.topicSet().forEach(topic -> lines.add(topic(topic) + " --> " + id(node.name())));
                    }
                    if (node instanceof TopologyDescription.Processor processor) {
                        processor.stores().forEach(store -> lines.add(id(node.name()) + " <--> " + store(store)));
                    }
                    if (node instanceof TopologyDescription.Sink sink) {
                        lines.add(id(node.name()) + " --> " + topic(sink.topic()));
                    }
                    node.successors().forEach(next -> lines.add(id(node.name()) + " --> " + id(next.name())));
                }));
        lines.forEach(line -> out.append("    ").append(line).append('\n'));
        return out.toString();
    }

    private static String id(String name) {
        return name.replace('-', '_') + "[" + name + "]";
    }

    private static String topic(String name) {
        return "topic_" + name.replaceAll("[^A-Za-z0-9]", "_") + "[(" + name + ")]";
    }

    private static String store(String name) {
        return "store_" + name.replace('-', '_') + "[(" + name + " store)]";
    }
}
