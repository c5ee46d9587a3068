#!/usr/bin/env python3
"""summ.py DIR... : per run (results.json of a flood bench), the measured pairs: topology CPU/1000 ev, pass-through,
same-pair CPU ratio, throughput ratio; then pooled medians and ranges per jar tag (runN-TAG)."""
import json, sys, os, re, statistics as st
pool = {}
def med(x): return st.median(x) if x else float('nan')
for d in sys.argv[1:]:
    for run in sorted(os.listdir(d), key=lambda r: int(re.match(r'run(\d+)', r).group(1)) if re.match(r'run\d+', r) else 0):
        f = os.path.join(d, run, 'results.json')
        if not os.path.isfile(f): continue
        r = json.load(open(f))
        fl = r.get('flood') or r.get('floodResults') or []
        if isinstance(fl, dict): fl = fl.get('runs') or fl.get('results') or []
        by = {}
        for x in fl:
            by.setdefault(x['pair'], {})[x['app']] = x
        rows = []
        for p, apps in sorted(by.items()):
            if p <= 0: continue
            t = apps.get('upsert topology (appends on)'); s = apps.get('pass-through Streams')
            if not t or not s: continue
            rows.append((t['appCpuMsPer1000Events'], s['appCpuMsPer1000Events'], t['appCpuMsPer1000Events'] / s['appCpuMsPer1000Events'], t['eventsPerSec'] / s['eventsPerSec'], t['seconds'], s['seconds']))
        tag = re.sub(r'^run\d+-', '', run)
        pool.setdefault(tag, []).extend(rows)
        fmt = lambda i, n=2: '%.*f (%.*f-%.*f)' % (n, med([x[i] for x in rows]), n, min(x[i] for x in rows), n, max(x[i] for x in rows))
        print('%-24s ratio %s  topo CPU %s  pass %s  cpu ratio %s  windows topo %s' % (run, fmt(3), fmt(0), fmt(1), fmt(2), ' '.join('%.2f' % x[4] for x in rows)))
for tag, rows in pool.items():
    fmt = lambda i: '%.2f (%.2f-%.2f)' % (med([x[i] for x in rows]), min(x[i] for x in rows), max(x[i] for x in rows))
    print('POOLED %-16s n=%d  ratio %s  topo CPU %s  pass %s  cpu ratio %s' % (tag, len(rows), fmt(3), fmt(0), fmt(1), fmt(2)))
