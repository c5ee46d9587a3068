"""CPU by thread group from `jfr print --events jdk.ThreadCPULoad,jdk.CPULoad` (ThreadCPULoad: share of one core
over the last period, every 10 s in default.jfc), plus the JVM's own total from CPULoad (share of all cores, every 1 s)."""
import sys, re, collections
grp = collections.Counter(); tot = 0.0; jvm = 0.0; ev = None; vals = {}
for path in sys.argv[1:]:
    for line in open(path, errors='replace'):
        s = line.strip()
        if s.startswith('jdk.'): ev = s.split()[0]; vals = {}
        elif '=' in s:
            k, v = [x.strip() for x in s.split('=', 1)]; vals[k] = v
        elif s == '}':
            if ev == 'jdk.ThreadCPULoad':
                c = (float(vals['user'].rstrip('%')) + float(vals['system'].rstrip('%'))) / 100 * 10  # core-seconds over 10 s
                name = re.sub(r'\d+', 'N', vals['eventThread'].split('"')[1])
                grp[name] += c; tot += c
            elif ev == 'jdk.CPULoad':
                jvm += (float(vals['jvmUser'].rstrip('%')) + float(vals['jvmSystem'].rstrip('%'))) / 100 * 2  # 2 cores, 1 s
print(f"threads' CPU {tot:.0f} s; the JVMs' CPU (CPULoad) {jvm:.0f} s; the gap (GC, JIT, VM threads) {jvm - tot:.0f} s")
for k, v in grp.most_common(20):
    print(f"{100*v/jvm:5.1f} % {v:6.1f} s  {k}")
