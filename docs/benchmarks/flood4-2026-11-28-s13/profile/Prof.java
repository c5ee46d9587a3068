import jdk.jfr.consumer.*;
import java.nio.file.*;
import java.util.*;

/** Prof FILE.jfr [--tree FRAME] : per app (measured pairs p1.., stream thread), inclusive and self shares of
 *  jdk.ExecutionSample frames, and allocation weight by top frame (jdk.ObjectAllocationSample). */
public class Prof {
    static String app(String t) {
        if (t == null || !t.contains("StreamThread") || t.contains("warmup")) return null;
        if (t.contains("bench-flood-topology-p")) return "topology";
        if (t.contains("bench-flood-passthrough-p")) return "pass-through";
        return null;
    }
    static String name(RecordedFrame f) { return f.getMethod().getType().getName().replaceAll("^.*\\.", "") + "." + f.getMethod().getName(); }
    public static void main(String[] a) throws Exception {
        String tree = null; int depth = 12;
        for (int i = 1; i < a.length; i++) if (a[i].equals("--tree")) tree = a[++i];
        Map<String, Map<String, Integer>> incl = new TreeMap<>(), self = new TreeMap<>();
        Map<String, Integer> total = new TreeMap<>();
        Map<String, Map<String, Long>> alloc = new TreeMap<>(); Map<String, Long> allocTotal = new TreeMap<>();
        Map<String, Integer> callers = new HashMap<>(), callees = new HashMap<>();
        try (RecordingFile rf = new RecordingFile(Path.of(a[0]))) {
            while (rf.hasMoreEvents()) {
                RecordedEvent e = rf.readEvent();
                String type = e.getEventType().getName();
                if (type.equals("jdk.ExecutionSample")) {
                    RecordedThread th = e.getThread("sampledThread");
                    String ap = app(th == null ? null : th.getJavaName());
                    if (ap == null || e.getStackTrace() == null) continue;
                    total.merge(ap, 1, Integer::sum);
                    List<RecordedFrame> fr = e.getStackTrace().getFrames();
                    Set<String> seen = new HashSet<>();
                    for (RecordedFrame f : fr) if (seen.add(name(f))) incl.computeIfAbsent(ap, k -> new HashMap<>()).merge(name(f), 1, Integer::sum);
                    if (!fr.isEmpty()) self.computeIfAbsent(ap, k -> new HashMap<>()).merge(name(fr.get(0)), 1, Integer::sum);
                    if (tree != null && ap.equals("topology")) {
                        for (int i = 0; i < fr.size(); i++) if (name(fr.get(i)).equals(tree)) {
                            StringBuilder c = new StringBuilder();
                            for (int j = i - 1; j >= Math.max(0, i - 3); j--) c.append(name(fr.get(j))).append(" > ");
                            callees.merge(c.length() == 0 ? "(self)" : c.toString(), 1, Integer::sum);
                            StringBuilder p = new StringBuilder();
                            for (int j = i + 1; j < Math.min(fr.size(), i + 4); j++) p.append(" < ").append(name(fr.get(j)));
                            callers.merge(p.toString(), 1, Integer::sum);
                            break;
                        }
                    }
                } else if (type.equals("jdk.ObjectAllocationSample")) {
                    RecordedThread th = e.getThread("eventThread");
                    String ap = app(th == null ? null : th.getJavaName());
                    if (ap == null || e.getStackTrace() == null) continue;
                    long w = e.getLong("weight");
                    allocTotal.merge(ap, w, Long::sum);
                    List<RecordedFrame> fr = e.getStackTrace().getFrames();
                    String k = e.getClass("objectClass").getName() + " @ " + (fr.isEmpty() ? "?" : fr.stream().limit(3).map(Prof::name).reduce((x, y) -> x + " < " + y).get());
                    alloc.computeIfAbsent(ap, x -> new HashMap<>()).merge(k, w, Long::sum);
                }
            }
        }
        System.out.println("samples " + total + "  allocated MB (sampled weight) " + allocTotal.entrySet().stream().map(x -> x.getKey() + "=" + x.getValue() / 1_000_000).toList());
        for (String ap : incl.keySet()) {
            int t = total.get(ap);
            System.out.println("=== " + ap + " inclusive (top 70)");
            incl.get(ap).entrySet().stream().sorted((x, y) -> y.getValue() - x.getValue()).limit(70)
                .forEach(x -> System.out.printf("%6d %5.1f%% %s%n", x.getValue(), 100.0 * x.getValue() / t, x.getKey()));
            System.out.println("=== " + ap + " self (top 40)");
            self.get(ap).entrySet().stream().sorted((x, y) -> y.getValue() - x.getValue()).limit(40)
                .forEach(x -> System.out.printf("%6d %5.1f%% %s%n", x.getValue(), 100.0 * x.getValue() / t, x.getKey()));
            if (alloc.containsKey(ap)) {
                long at = allocTotal.get(ap);
                System.out.println("=== " + ap + " allocation by class @ top frames (top 25)");
                alloc.get(ap).entrySet().stream().sorted((x, y) -> Long.compare(y.getValue(), x.getValue())).limit(25)
                    .forEach(x -> System.out.printf("%8d MB %5.1f%% %s%n", x.getValue() / 1_000_000, 100.0 * x.getValue() / at, x.getKey()));
            }
        }
        if (tree != null) {
            System.out.println("=== callees of " + tree); callees.entrySet().stream().sorted((x, y) -> y.getValue() - x.getValue()).limit(30).forEach(x -> System.out.printf("%6d %s%n", x.getValue(), x.getKey()));
            System.out.println("=== callers of " + tree); callers.entrySet().stream().sorted((x, y) -> y.getValue() - x.getValue()).limit(15).forEach(x -> System.out.printf("%6d %s%n", x.getValue(), x.getKey()));
        }
    }
}
