#!/usr/bin/env python3
"""lat.py DIR : emit p99 and content p99 through appends of each run's pairs (latN-TAG), and pooled over the warm pairs
(the first pair of each run, a cold JVM, left out)."""
import json, sys, os, re, statistics as st
pool = {}
for run in sorted(os.listdir(sys.argv[1]), key=lambda r: int(re.match(r'lat(\d+)', r).group(1)) if re.match(r'lat\d+', r) else 0):
    f = os.path.join(sys.argv[1], run, 'results.json')
    if not os.path.isfile(f): continue
    ts = json.load(open(f))['ladder'][0]['topology']
    e = [t['emitLatency']['p99'] for t in ts]; c = [t['appendLatency']['p99'] for t in ts]; cpu = [t['appCpuMsPer1000Events'] for t in ts]
    print('%-22s emit p99 %s   content p99 through appends %s   app CPU/1000 ev %s' % (run, ' '.join('%.1f' % x for x in e), ' '.join('%.1f' % x for x in c), ' '.join('%.1f' % x for x in cpu)))
    tag = re.sub(r'^lat\d+-', '', run)
    p = pool.setdefault(tag, ([], [], []))
    p[0].extend(e[1:]); p[1].extend(c[1:]); p[2].extend(cpu[1:])
for tag, (e, c, cpu) in pool.items():
    print('WARM %-16s n=%d emit p99 %.1f (%.1f-%.1f)  content p99 %.1f (%.1f-%.1f)  app CPU %.1f (%.1f-%.1f)' % (tag, len(e), st.median(e), min(e), max(e), st.median(c), min(c), max(c), st.median(cpu), min(cpu), max(cpu)))
