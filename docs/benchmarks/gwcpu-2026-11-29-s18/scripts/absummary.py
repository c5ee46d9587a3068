"""One A/B run's figures: CPU by role over the fault run (cpusample.log), the gateways' CPU by thread group
(threads-PID.log: each thread's last cumulative ticks), the turn producers' requests and retries (metrics-PID.log:
the last scrape of each gateway), and the takeover figures (out/cluster-results.md). Usage: absummary.py RUNDIR"""
import sys, glob, re, collections, os
R = sys.argv[1]
rows = [l.split() for l in open(f'{R}/cpusample.log') if len(l.split()) == 4]
by_time = collections.defaultdict(dict)
for t, p, r, s in rows:
    by_time[t][p] = (r, int(s))
times = sorted(by_time)
sec = lambda t: sum(int(x) * m for x, m in zip(t.split(':'), (3600, 60, 1)))
fault = [t for t in times if any(r.startswith('gateway') for r, _ in by_time[t].values())]
cpu = collections.defaultdict(float)
for a, b in zip(times, times[1:]):
    if a in fault and b in fault:
        for p, (r, s) in by_time[b].items():
            if p in by_time[a]:
                cpu[r.split('-')[0] if r.startswith(('broker', 'gateway', 'topology', 'tool')) else r] += (s - by_time[a][p][1]) / 100
span = sec(fault[-1]) - sec(fault[0]) if fault else 0
out = {'fault span s': span}
for k in ('gateway', 'broker', 'topology', 'tool', 'bench', 'other'):
    out[f'{k} CPU s'] = round(sum(v for r, v in cpu.items() if r.startswith(k)), 1)
# gateways' whole life from their own threads
groups = collections.defaultdict(float)
GROUPS = [('turn producers I/O', r'^kafka-producer-network-thread_\|_turnstream-gateway-turns|^kafka-producer-'),
          ('JIT', r'^C[12]_CompilerThre'), ('GC/VM', r'^(VM_Thread|GC_Thread|VM_Periodic)'),
          ('turn threads', r'^turn-\d'), ('provider client', r'^HttpClient-'),
          ('simulated provider', r'^(simulated-provi|HTTP-Dispatcher)'), ('Kafka readers', r'^turnstream-gate'),
          ('ownership', r'^turn-owner|^turn-takeover|^kafka-coordinat'), ('main', r'^main$')]
life = 0
for f in glob.glob(f'{R}/threads-*.log'):
    last = {}
    for l in open(f):
        t, p, tid, name, ticks = l.split()
        last[tid] = (name, int(ticks))
    for tid, (name, ticks) in last.items():
        g = next((g for g, rx in GROUPS if re.search(rx, name)), 'other')
        groups[g] += ticks / 100
        life += ticks / 100
out['gateways threads CPU s (sampled, life)'] = round(life, 1)
for g, v in sorted(groups.items(), key=lambda x: -x[1]):
    out[f'  {g}'] = round(v, 1)
req = collections.defaultdict(float)
for f in glob.glob(f'{R}/metrics-*.log'):
    lines = [l for l in open(f)]
    if not lines:
        continue
    lastt = lines[-1].split()[0]
    for l in lines:
        if not l.startswith(lastt) or 'turnstream-gateway-turns' not in l:
            continue
        name = l.split()[1].split('{')[0]
        if name in ('kafka_producer_request_total', 'kafka_producer_record_retry_total', 'kafka_producer_record_send_total'):
            req[name] += float(l.split()[-1])
for k, v in req.items():
    out[k + ' (turn producers, last scrape)'] = int(v)
md = open(f'{R}/out/cluster-results.md').read() if os.path.exists(f'{R}/out/cluster-results.md') else ''
for key in ('topology instance SIGKILLed: every task partition again', 'topology instance SIGKILLed: task partitions again, median partition',
            'gateway SIGKILLed: upserts again, median turn', 'gateway SIGKILLed: raw events again', 'topology throughput, 1 instance'):
    m = re.search(r'\| ' + re.escape(key) + r'[^|]*\| ([^|]+)\|', md)
    if m:
        out[key] = m.group(1).strip()
m = re.search(r'(\d+) turns \(\d+ started at once\) ended after (\d+) s', open(f'{R}/bench.log').read())
if m:
    out['turns ended after s'] = m.group(2)
out['gateway CPU s per turn'] = round(out['gateway CPU s'] / 200, 3)
for k, v in out.items():
    print(f'{k}: {v}')
