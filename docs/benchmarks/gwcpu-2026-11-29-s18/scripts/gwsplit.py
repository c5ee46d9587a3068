"""A gateway's CPU by thread group (from gwprof.sh's per-thread ticks, names completed from the JFR recording) and its
Java samples by what they run (jdk.ExecutionSample, the whole stack searched from the top for the first frame of a
known kind). Usage: gwsplit.py threads-PID.log gw-PID.jfr"""
import sys, json, subprocess, collections, re
threads_log, jfr = sys.argv[1], sys.argv[2]
last = {}
first = {}
for line in open(threads_log):
    t, pid, tid, name, ticks = line.split()
    last[tid] = (name, int(ticks))
    first.setdefault(tid, (t, int(ticks)))
def events(kind):
    out = subprocess.run(['jfr', 'print', '--json', '--stack-depth', '64', '--events', kind, jfr],
                         capture_output=True, text=True).stdout
    return json.loads(out)['recording']['events']
names = {}
samples = events('jdk.ExecutionSample')
for e in samples:
    th = e['values']['sampledThread']
    if th and th.get('osThreadId'):
        names[str(th['osThreadId'])] = th.get('javaName') or th.get('osName')
GROUPS = [
    ('simulated provider (its HTTP server)', r'^(simulated-provider|HTTP-Dispatcher|server-timer|idle-timeout-task)'),
    ('provider client (JDK HttpClient)', r'^HttpClient-'),
    ('turn threads (provider stream, normalise, send)', r'^turn-\d'),
    ('Kafka producer I/O', r'^kafka-producer-network-thread'),
    ('views: live upserts+appends reader', r'^turnstream-gateway-live'),
    ('views: item-state reader', r'^turnstream-gateway-item-state'),
    ('turn-requests / ownership consumer', r'^(turn-ownership|turn-takeover|turnstream-gateway-turns)'),
    ('send completions', r'-sent-\d+$'),
    ('SSE out (sender, heartbeats)', r'^turnstream-sse-'),
    ('HTTP server (Jetty)', r'^(qtp|JettyServerThreadPool|Jetty|Javalin)'),
    ('other Kafka readers (tool catalog, allowances, control)', r'^turnstream-'),
    ('JIT', r'^C[12] CompilerThre'),
    ('GC', r'^(GC Thread|VM Thread|G1|Gang worker)'),
    ('JFR/attach/JVM', r'^(JFR|Attach|Signal|VM Periodic|Service Thread|Monitor Deflation|Common-Cleaner|Reference|Finalizer|Notification|Sweeper)'),
]
def group(name):
    for g, rx in GROUPS:
        if re.search(rx, name):
            return g
    return 'other: ' + re.sub(r'\d+', 'N', name)
cpu = collections.defaultdict(float)
per_name = collections.defaultdict(float)
for tid, (short, ticks) in last.items():
    name = names.get(tid, short)
    cpu[group(name)] += ticks / 100
    per_name[re.sub(r'\d+', 'N', name)] += ticks / 100
total = sum(cpu.values())
print(f"threads: {total:.1f} CPU s over the process's life (threads that ended before a sample are missing)")
print("| thread group | CPU s | share |\n|---|---|---|")
for g, v in sorted(cpu.items(), key=lambda x: -x[1]):
    print(f"| {g} | {v:.1f} | {100*v/total:.0f} % |")
print("\ntop thread names:")
for n, v in sorted(per_name.items(), key=lambda x: -x[1])[:25]:
    print(f"  {v:7.1f}  {n}")
KINDS = [
    ('logging', r'org\.apache\.logging|org\.slf4j'),
    ('JSON (Jackson)', r'com\.fasterxml\.jackson'),
    ('simulated provider', r'io\.turnstream\.gateway\.sim\.'),
    ('Kafka client', r'org\.apache\.kafka'),
    ('JDK HttpClient', r'jdk\.internal\.net\.http'),
    ('Jetty/Javalin', r'org\.eclipse\.jetty|io\.javalin'),
    ('OpenTelemetry', r'io\.opentelemetry'),
    ('micrometer', r'io\.micrometer'),
]
by_thread_kind = collections.defaultdict(collections.Counter)
top_frames = collections.defaultdict(collections.Counter)
tsframes = collections.defaultdict(collections.Counter)
for e in samples:
    v = e['values']
    th = v['sampledThread']; tname = (th.get('javaName') or th.get('osName') or '?') if th else '?'
    frames = [f['method']['type']['name'].replace('/', '.') + '.' + f['method']['name'] for f in (v['stackTrace'] or {}).get('frames', [])]
    kind = 'other'
    for f in frames:
        k = next((k for k, rx in KINDS if re.match(rx, f)), None)
        if k:
            kind = k
            break
    # first turnstream frame: whose code asked for it
    ts = next((f for f in frames if f.startswith('io.turnstream')), '(none)')
    g = group(tname)
    by_thread_kind[g][kind] += 1
    top_frames[g][frames[0] if frames else '?'] += 1
    tsframes[g][ts] += 1
n = len(samples)
print(f"\n{n} Java samples")
for g, c in sorted(by_thread_kind.items(), key=lambda x: -sum(x[1].values())):
    s = sum(c.values())
    print(f"\n## {g}: {s} samples ({100*s/n:.0f} %)")
    print("   kinds (first known frame from the top): " + ", ".join(f"{k} {100*v/s:.0f}%" for k, v in c.most_common()))
    print("   top frames: " + "; ".join(f"{k} {v}" for k, v in top_frames[g].most_common(6)))
    print("   first turnstream frame: " + "; ".join(f"{k} {v}" for k, v in tsframes[g].most_common(8)))
