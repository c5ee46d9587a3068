import com.sun.tools.attach.VirtualMachine;
import javax.management.*;
import javax.management.remote.*;
import java.nio.file.*;
import java.util.*;
import java.time.*;

/** Every N s: for each java process with --node-id in its command line, the brokers' cumulative request counts per API. */
public class ReqRates {
    public static void main(String[] a) throws Exception {
        int every = Integer.parseInt(a[0]);
        Map<Long, MBeanServerConnection> conns = new HashMap<>();
        while (true) {
            String t = LocalTime.now(ZoneOffset.UTC).withNano(0).toString();
            for (ProcessHandle ph : ProcessHandle.allProcesses().toList()) {
                String cmd = ph.info().arguments().map(x -> String.join(" ", x)).orElse("");
                int i = cmd.indexOf("--node-id ");
                if (i < 0) continue;
                String node = cmd.substring(i + 10).split(" ")[0];
                long pid = ph.pid();
                try {
                    MBeanServerConnection c = conns.get(pid);
                    if (c == null) {
                        VirtualMachine vm = VirtualMachine.attach(Long.toString(pid));
                        String addr = vm.startLocalManagementAgent();
                        vm.detach();
                        c = JMXConnectorFactory.connect(new JMXServiceURL(addr)).getMBeanServerConnection();
                        conns.put(pid, c);
                    }
                    Map<String, Long> sum = new TreeMap<>();
                    for (ObjectName n : c.queryNames(new ObjectName("kafka.network:type=RequestMetrics,name=RequestsPerSec,*"), null)) {
                        long cnt = ((Number) c.getAttribute(n, "Count")).longValue();
                        sum.merge(n.getKeyProperty("request"), cnt, Long::sum);
                    }
                    StringBuilder sb = new StringBuilder();
                    for (var e : sum.entrySet()) sb.append(t).append(' ').append(pid).append(' ').append(node).append(' ').append(e.getKey()).append(' ').append(e.getValue()).append('\n');
                    System.out.print(sb);
                    System.out.flush();
                } catch (Exception e) {
                    conns.remove(pid);
                    System.err.println(t + " " + pid + " " + e);
                }
            }
            Thread.sleep(every * 1000L);
        }
    }
}
