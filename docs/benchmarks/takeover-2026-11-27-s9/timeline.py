#!/usr/bin/env python3
"""Seconds from the topology instance's SIGKILL to each takeover step, from a fault run's logs."""
import json, sys, os, re, glob, datetime as dt
res, logs = sys.argv[1], sys.argv[2]
d = json.load(open(res))
run = int(sys.argv[3]) if len(sys.argv) > 3 else 1
f = [f for r in d['faultRuns'] if r['run'] == run for f in r['faults'] if f['what'] == 'topology instance'][0]
k = dt.datetime.fromisoformat(f['killedAt'].replace('Z', '+00:00'))
day = k.date()
def t(line):
    m = re.match(r'(\d\d):(\d\d):(\d\d)\.(\d\d\d)', line)
    if not m: return None
    x = dt.datetime(day.year, day.month, day.day, int(m[1]), int(m[2]), int(m[3]), int(m[4]) * 1000, tzinfo=dt.timezone.utc)
    if x - k > dt.timedelta(hours=12): x -= dt.timedelta(days=1)
    if k - x > dt.timedelta(hours=12): x += dt.timedelta(days=1)
    return (x - k).total_seconds()
print('killed at', f['killedAt'], 'every partition', f['partitionsAgainSeconds'], 'per partition', f['partitionsAgain'])
ev = []
for n in glob.glob(os.path.join(logs, 'node-*.log')):
    for line in open(n, errors='replace'):
        s = t(line)
        if s is None or s < -8 or s > 20: continue
        if 'cluster-faults' in line and ('has failed, removing' in line or 'Stabilized group' in line):
            ev.append((s, 'broker', line[line.index('] ', 40) + 2:][:90]))
        if 'TransactionCoordinator' in line and 'rollback' in line:
            ev.append((s, 'broker', 'rollback (timeout) ' + line.split('transactionalId ')[1][:50]))
for n in sorted(glob.glob(os.path.join(logs, 'topology-*.log'))):
    last = None; commits = []
    for line in open(n, errors='replace'):
        s = t(line)
        if s is None: continue
        last = s
        if s < -8 or s > 20: continue
        if 'CONCURRENT_TRANSACTIONS' in line:
            if not commits or s - commits[-1] > 0.4: commits.append(s)
            continue
        for key in ('Request joining group due to', '(Re-)joining group', 'Successfully joined', 'Successfully synced', 'REBALANCING -> RUNNING', 'RUNNING -> REBALANCING', 'State transition', 'Restored and ready', 'Finished restoring', 'Restoration in progress', 'unstable offsets', 'Restoration took', 'Handle new assignment'):
            if key in line:
                ev.append((s, os.path.basename(n)[:10], key + ('' if key not in ('Finished restoring',) else ' ' + line.split('changelog ')[1].split(' ')[0])))
                break
    ev.append((last, os.path.basename(n)[:10], 'last line'))
    ev.append((None, os.path.basename(n)[:10], 'new transactions (CONCURRENT_TRANSACTIONS retries) at ' + ' '.join('%.1f' % c for c in commits)))
for s, who, what in sorted(ev, key=lambda e: (e[0] is None, e[0] or 0)):
    print('%7s %-10s %s' % ('' if s is None else '%+.2f' % s, who, what))
