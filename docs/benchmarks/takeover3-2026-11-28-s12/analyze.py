#!/usr/bin/env python3
"""Per fault run of bench --cluster output dirs: the topology instance's figures and the survivor's steps.
usage: analyze.py DIR [DIR...]"""
import gzip, json, os, re, sys, datetime as dt

def owned(logs, killed):
    k = dt.datetime.fromisoformat(killed.replace('Z', '+00:00'))
    for name in ('topology-b.log', 'topology-b.log.gz'):
        p = os.path.join(logs, name)
        if not os.path.exists(p): continue
        per = {}
        for l in (gzip.open(p, 'rt', errors='replace') if p.endswith('.gz') else open(p, errors='replace')):
            m = re.match(r'(\d\d):(\d\d):(\d\d)\.(\d\d\d).*(StreamThread-\d+).*Notifying assignor about the new Assignment\(partitions=\[([^]]*)\]', l)
            if not m: continue
            x = dt.datetime(k.year, k.month, k.day, int(m[1]), int(m[2]), int(m[3]), int(m[4]) * 1000, tzinfo=dt.timezone.utc)
            if x < k: per[m[5]] = [q.strip().replace('llm.raw-events-', '') for q in m[6].split(',') if q.strip()]
        return sorted(q for v in per.values() for q in v)
    return []

def steps(logs, killed):
    k = dt.datetime.fromisoformat(killed.replace('Z', '+00:00'))
    def t(line):
        m = re.match(r'(\d\d):(\d\d):(\d\d)\.(\d\d\d)', line)
        if not m: return None
        x = dt.datetime(k.year, k.month, k.day, int(m[1]), int(m[2]), int(m[3]), int(m[4]) * 1000, tzinfo=dt.timezone.utc)
        return (x - k).total_seconds()
    best = None
    for name in ('topology-a.log', 'topology-b.log', 'topology-a.log.gz', 'topology-b.log.gz'):
        p = os.path.join(logs, name)
        if not os.path.exists(p): continue
        lines = (gzip.open(p, 'rt', errors='replace') if p.endswith('.gz') else open(p, errors='replace')).read().splitlines()
        ts = [l for l in lines if t(l) is not None]
        if ts and t(ts[-1]) > 30: best = (name, ts)
    if not best: return 'no survivor log'
    name, lines = best
    pats = [('asks', 'Request joining group due to'), ('join', '(Re-)joining group'), ('synced', 'Successfully synced group'),
            ('taken', 'Restored and ready to run'), ('RUNNING', 'REBALANCING to RUNNING')]
    res = {}
    for label, pat in pats:
        hits = [t(l) for l in lines if pat in l and 0 < t(l) < 60]
        if hits: res[label] = (min(hits), max(hits)) if label == 'taken' else (min(hits),)
    return name + ' ' + ' '.join(f'{k} ' + '-'.join(f'{v:.2f}' for v in vs) for k, vs in res.items())

for d in sys.argv[1:]:
    r = json.load(open(os.path.join(d, 'cluster-results.json')))
    for run in r['faultRuns']:
        f = [f for f in run.get('faults') or [] if f['what'] == 'topology instance']
        if not f:
            print(d, 'run', run['run'], 'no topology fault', run.get('error')); continue
        f = f[0]
        pa = sorted((v, p) for p, v in f['partitionsAgain'].items())
        own = owned(os.path.join(d, 'logs', f"fault-run-{run['run']}"), f['killedAt'])
        ownv = sorted(v for p, v in f['partitionsAgain'].items() if p in own)
        deadv = sorted(v for p, v in f['partitionsAgain'].items() if p not in own)
        lb = run['loadBefore']; la = run['loadAfter']
        print(f"{os.path.basename(d)} run {run['run']}: every {f['partitionsAgainSeconds']:.1f} s, median {f['partitionsAgainMedianSeconds']:.1f} s, "
              f"last turn upserts {f['upsertsAgainSeconds']:.1f} s, raw {f['rawAgainSeconds']}; partitions "
              + ', '.join(f'{p}: {v:.1f}' for v, p in pa) + f"; load {lb['one']} / {la['one']}")
        print('    own', own, ' '.join(f'{v:.1f}' for v in ownv), '| taken', ' '.join(f'{v:.1f}' for v in deadv))
        print('   ', steps(os.path.join(d, 'logs', f"fault-run-{run['run']}"), f['killedAt']))
