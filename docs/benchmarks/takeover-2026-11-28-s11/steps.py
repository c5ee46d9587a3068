#!/usr/bin/env python3
"""Survivor's takeover steps, seconds after the topology instance's SIGKILL, from a bench --cluster output dir."""
import gzip, re, sys, os, datetime
d = sys.argv[1]
out = open(os.path.join(d, 'bench-output.txt') if os.path.exists(os.path.join(d, 'bench-output.txt')) else d + '.out').read()
m = re.search(r'topology instance SIGKILLed at (\S+)Z', out)
kill = datetime.datetime.fromisoformat(m.group(1))
def t(line):
    h, mi, s = line[:12].split(':')
    x = kill.replace(hour=int(h), minute=int(mi), second=0, microsecond=0) + datetime.timedelta(seconds=float(s))
    return (x - kill).total_seconds()
logs = os.path.join(d, 'logs', 'fault-run-1')
best = None
for name in ('topology-a.log', 'topology-b.log', 'topology-a.log.gz', 'topology-b.log.gz'):
    p = os.path.join(logs, name)
    if not os.path.exists(p): continue
    lines = (gzip.open(p, 'rt') if p.endswith('.gz') else open(p)).read().splitlines()
    lines = [l for l in lines if re.match(r'\d\d:\d\d:\d\d\.\d\d\d', l)]
    if lines and t(lines[-1]) > 30: best = (name, lines)
name, lines = best
steps = [('heartbeat asks to rejoin', 'Request joining group due to'), ('JoinGroup', '(Re-)joining group'),
         ('synced', 'Successfully synced group'), ('tasks restored (state updater)', 'Finished restoring changelog'),
         ('first restored task taken', 'Restored and ready to run'), ('RUNNING', 'PARTITIONS_ASSIGNED to RUNNING')]
res = {}
for label, pat in steps:
    for l in lines:
        if pat in l and t(l) > 0:
            if label == 'tasks restored (state updater)':
                res[label] = t(l)  # keep the last within the takeover
                continue
            res.setdefault(label, t(l))
    if label == 'tasks restored (state updater)':
        # last restore line before the first restored task taken
        pass
first_taken = None
for l in lines:
    if 'Restored and ready to run' in l and t(l) > 0:
        first_taken = t(l); break
rest = [t(l) for l in lines if 'Finished restoring changelog' in l and 0 < t(l) <= (first_taken or 1e9)]
res['tasks restored (state updater)'] = max(rest) if rest else None
print(name, ' '.join(f'{k}: {v:.2f}' if v is not None else f'{k}: -' for k, v in res.items()))
row = [l for l in open(os.path.join(d, 'cluster-results.md')) if l.startswith('| topology instance |')]
print(row[0].strip() if row else '')
