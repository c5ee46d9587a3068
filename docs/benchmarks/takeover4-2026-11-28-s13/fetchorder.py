#!/usr/bin/env python3
"""Diagnostic run (fetch classes at TRACE, StreamThread at DEBUG): for each fault run, the survivor's main consumer,
per partition of llm.raw-events after the tasks were taken: its first fetch request sent, first fetch returned,
first records handed to the stream thread (seconds from the SIGKILL), the polls skipped because its leader node
hosted buffered partitions, and the partition's 'again' time from cluster-results.json; also the survivor's
commits (start, duration) after the tasks were taken.  usage: fetchorder.py DIR (a bench --cluster output dir, or cluster-D1 of the raw results)"""
import datetime as dt, gzip, json, os, re, sys

d = sys.argv[1]
r = json.load(open(os.path.join(d, 'cluster-results.json')))

def opened(p):
    return gzip.open(p, 'rt', errors='replace') if p.endswith('.gz') else open(p, errors='replace')

for run in r['faultRuns']:
    f = [x for x in run['faults'] if x['what'] == 'topology instance'][0]
    k = dt.datetime.fromisoformat(f['killedAt'].replace('Z', '+00:00'))
    def clock(line):
        m = re.match(r'(\d\d):(\d\d):(\d\d)\.(\d\d\d)', line)
        if not m: return None
        x = dt.datetime(k.year, k.month, k.day, int(m[1]), int(m[2]), int(m[3]), int(m[4]) * 1000, tzinfo=dt.timezone.utc)
        return (x - k).total_seconds()
    logs = os.path.join(d, 'logs', f"fault-run-{run['run']}")
    if os.path.isdir(logs):
        names = [os.path.join(logs, n) for n in sorted(os.listdir(logs)) if n.startswith('topology-') and '.log' in n]
    else:  # the raw results keep only the survivor's excerpt
        names = [os.path.join(d, 'logs', n) for n in sorted(os.listdir(os.path.join(d, 'logs')))
                 if n.startswith(f"fault-run-{run['run']}-survivor-")]
    surv = None
    for name in names:
        last = None
        for l in opened(name):
            t = clock(l)
            if t is not None: last = t
        if last and last > 30: surv = name
    taken, first, commits, own = None, {}, [], None
    for l in opened(surv):
        t = clock(l)
        if t is None or t < 0 or t > 45: continue
        if 'Restored and ready to run' in l:
            taken = taken or t
            continue
        m = re.search(r'Committed all active tasks \[([^]]*)\].* in (\d+)ms', l)
        if m and taken and t >= taken:
            commits.append((t - int(m[2]) / 1000, int(m[2]) / 1000, len(m[1].split(','))))
            continue
        if taken is None or 'StreamThread-1-consumer,' not in l: continue
        m = re.search(r'llm\.raw-events-(\d)', l)
        if not m: continue
        p = m[1]
        e = first.setdefault(p, {})
        if 'Added read_committed fetch request' in l: e.setdefault('sent', t)
        elif 'returned fetch data' in l: e.setdefault('returned', t)
        elif re.search(r'Returning \d+ fetched records', l): e.setdefault('handed', t)
        elif 'hosts buffered partitions' in l and 'handed' not in e: e['gated'] = e.get('gated', 0) + 1
    print(f"run {run['run']}: survivor {os.path.basename(surv)}, restored tasks taken at {taken:.2f} s")
    print('  commits after (start +duration, tasks): ' + ', '.join(f'{s:.2f} +{du:.2f} ({n})' for s, du, n in commits[:10]))
    for p in sorted(first, key=lambda q: first[q].get('handed', 99)):
        e = first[p]
        print(f"  llm.raw-events-{p}: fetch sent {e.get('sent', float('nan')):.2f}, returned {e.get('returned', float('nan')):.2f}, "
              f"first records handed {e.get('handed', float('nan')):.2f}, skipped for a buffered node {e.get('gated', 0)}x; "
              f"partition again {f['partitionsAgain'].get(p, float('nan')):.2f}")
