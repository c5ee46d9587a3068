#!/usr/bin/env python3
"""summ.py DIR : the flood A/B of Kafka 4.4.0 against 4.3.1 (runN-TAG/results.json of `bench --only flood`).
Per run, the median (range) over its measured pairs of: the throughput ratio (the bench's figure), the topology's and
the pass-through's events/s, their CPU ms per 1,000 events and the same-pair CPU ratio, and the topology's records
sent again. Then per jar: the median and range of the runs' medians, and of all the jar's pairs pooled."""
import json, os, re, sys, statistics as st

TOPO, PASS = 'upsert topology (appends on)', 'pass-through Streams'
COLS = [('ratio', '%.2f'), ('topo ev/s', '%.0f'), ('pass ev/s', '%.0f'), ('topo CPU', '%.2f'), ('pass CPU', '%.2f'),
        ('CPU t/p', '%.2f'), ('resent', '%.0f')]

def pairs(path):
    by = {}
    for x in json.load(open(path))['flood']:
        if x['pair'] > 0:
            by.setdefault(x['pair'], {})[x['app']] = x
    for p in sorted(by):
        t, s = by[p][TOPO], by[p][PASS]
        yield (t['eventsPerSec'] / s['eventsPerSec'], t['eventsPerSec'], s['eventsPerSec'], t['appCpuMsPer1000Events'],
               s['appCpuMsPer1000Events'], t['appCpuMsPer1000Events'] / s['appCpuMsPer1000Events'], t.get('producerRetries', 0))

def cell(vals, fmt):
    return (fmt + ' (' + fmt + '-' + fmt + ')') % (st.median(vals), min(vals), max(vals))

out = sys.argv[1]
runs = sorted((d for d in os.listdir(out) if re.match(r'run\d+-', d) and os.path.isdir(os.path.join(out, d))),
              key=lambda d: int(re.match(r'run(\d+)', d).group(1)))
per_jar, pooled = {}, {}
print('| run | jar | ' + ' | '.join(c for c, _ in COLS) + ' |')
print('|---' * (len(COLS) + 2) + '|')
for d in runs:
    rows = list(pairs(os.path.join(out, d, 'results.json')))
    tag = re.sub(r'^run\d+-', '', d)
    meds = [st.median(r[i] for r in rows) for i in range(len(COLS))]
    per_jar.setdefault(tag, []).append(meds)
    pooled.setdefault(tag, []).extend(rows)
    print('| %s | %s | ' % (d.split('-')[0], tag) + ' | '.join(cell([r[i] for r in rows], f) for i, (_, f) in enumerate(COLS)) + ' |')
for name, src in (('runs\' medians', per_jar), ('pairs pooled', pooled)):
    print('\nper jar, %s:' % name)
    for tag, rows in src.items():
        print('  %-14s n=%d  ' % (tag, len(rows)) + '  '.join('%s %s' % (c, cell([r[i] for r in rows], f)) for i, (c, f) in enumerate(COLS)))

# flood6 additions: each run's warm-up (pairs run, settled or not), the bench's settle check (longest wait, runs
# not settled), and per window the two jars' run medians side by side (runs paired in the order of window.log).
print('\nwarm-up and settle check per run:')
for d in runs:
    log = os.path.join(out, d + '.log')
    txt = open(log).read() if os.path.exists(log) else ''
    m = re.search(r'flood warm-up: (.*)', txt)
    r = json.load(open(os.path.join(out, d, 'results.json')))
    s = r.get('settling', [])
    waits = [x['waitedSeconds'] for x in s]
    print('  %-22s %-70s settle check: %d runs, longest wait %.0f s, not settled %d; load %.2f / %.2f; %.0f s' % (
        d, m.group(1) if m else '?', len(s), max(waits) if waits else 0, sum(1 for x in s if not x['settled']),
        r['loadBefore']['one'], r['loadAfter']['one'], r['durationSeconds']))
print('\nper window (window.log order), run medians: ratio, topo CPU, CPU t/p')
wins, cur = [], None
for line in open(os.path.join(out, 'window.log')):
    if line.startswith('window taken'):
        cur = []; wins.append(cur)
    m = re.match(r'(run\d+-\S+) rc=0', line)
    if m and cur is not None and os.path.isdir(os.path.join(out, m.group(1))):
        cur.append(m.group(1))
for i, w in enumerate(wins, 1):
    parts = []
    for d in w:
        rows = list(pairs(os.path.join(out, d, 'results.json')))
        parts.append('%s %.2f %.2f %.2f' % (d, st.median(r[0] for r in rows), st.median(r[3] for r in rows), st.median(r[5] for r in rows)))
    print('  window %d: %s' % (i, ' | '.join(parts)))
