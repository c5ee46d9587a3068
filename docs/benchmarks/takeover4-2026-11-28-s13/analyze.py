#!/usr/bin/env python3
"""Per fault run of bench --cluster output dirs: the topology instance's figures and the survivor's steps,
under the classic group protocol or the Streams rebalance protocol (KIP-1071). takeover3's analyze.py
(docs/benchmarks/takeover3-2026-11-28-s12/) extended by helper takeover4.
usage: analyze.py DIR [DIR...]"""
import gzip, json, os, re, sys, datetime as dt

def lines_of(p):
    return (gzip.open(p, 'rt', errors='replace') if p.endswith('.gz') else open(p, errors='replace')).read().splitlines()

def clock(k, line):
    m = re.match(r'(\d\d):(\d\d):(\d\d)\.(\d\d\d)', line)
    if not m: return None
    x = dt.datetime(k.year, k.month, k.day, int(m[1]), int(m[2]), int(m[3]), int(m[4]) * 1000, tzinfo=dt.timezone.utc)
    return (x - k).total_seconds()

def survivor(logs, k):
    best = None
    for name in ('topology-a.log', 'topology-b.log', 'topology-a.log.gz', 'topology-b.log.gz'):
        p = os.path.join(logs, name)
        if not os.path.exists(p): continue
        ls = [l for l in lines_of(p) if clock(k, l) is not None]
        if ls and clock(k, ls[-1]) > 30: best = (name, ls)
    return best

def owned(lines, k):
    """The survivor's input partitions before the kill (the last assignment it had)."""
    own = []
    for l in lines:
        t = clock(k, l)
        if t is None or t >= 0: continue
        m = re.search(r'Notifying assignor about the new Assignment\(partitions=\[([^]]*)\]', l)
        if m: own = sorted(q.strip().replace('llm.raw-events-', '') for q in m[1].split(',') if q.strip())
        m = re.search(r'Assigning active tasks \{([^}]*)\}', l)
        if m: own = sorted(q.strip().split('_')[1] for q in m[1].split(',') if q.strip())
    return own

PATS = [('asks', 'Request joining group due to'), ('join', '(Re-)joining group'), ('synced', 'Successfully synced group'),
        ('reconciling', 'transitioned from STABLE to RECONCILING'), ('assigning', 'Assigning active tasks'),
        ('all-active', 'Assigning active tasks {0_0, 0_1, 0_2, 0_3, 0_4, 0_5}'),
        ('taken', 'Restored and ready to run'), ('RUNNING', 'REBALANCING to RUNNING')]

def steps(name, lines, k):
    res = {}
    for label, pat in PATS:
        hits = [clock(k, l) for l in lines if pat in l and 0 < clock(k, l) < 60]
        if hits: res[label] = (min(hits), max(hits)) if label == 'taken' else (min(hits),)
    return name + ' ' + ' '.join(f'{k} ' + '-'.join(f'{v:.2f}' for v in vs) for k, vs in res.items())

for d in sys.argv[1:]:
    r = json.load(open(os.path.join(d, 'cluster-results.json')))
    for run in r['faultRuns']:
        f = [f for f in run.get('faults') or [] if f['what'] == 'topology instance']
        if not f:
            print(d, 'run', run['run'], 'no topology fault', run.get('error')); continue
        f = f[0]
        k = dt.datetime.fromisoformat(f['killedAt'].replace('Z', '+00:00'))
        logs = os.path.join(d, 'logs', f"fault-run-{run['run']}")
        s = survivor(logs, k)
        own = owned(s[1], k) if s else []
        pa = sorted((v, p) for p, v in f['partitionsAgain'].items())
        ownv = sorted(v for p, v in f['partitionsAgain'].items() if p in own)
        deadv = sorted(v for p, v in f['partitionsAgain'].items() if p not in own)
        lb = run['loadBefore']; la = run['loadAfter']
        print(f"{os.path.basename(d)} run {run['run']}: every {f['partitionsAgainSeconds']:.1f} s, median {f['partitionsAgainMedianSeconds']:.1f} s, "
              f"last turn upserts {f['upsertsAgainSeconds']:.1f} s, raw {f['rawAgainSeconds']}; partitions "
              + ', '.join(f'{p}: {v:.1f}' for v, p in pa) + f"; load {lb['one']} / {la['one']}")
        print('    own', own, ' '.join(f'{v:.1f}' for v in ownv), '| taken', ' '.join(f'{v:.1f}' for v in deadv))
        print('   ', steps(s[0], s[1], k) if s else 'no survivor log')
