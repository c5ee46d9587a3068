#!/usr/bin/env python3
"""Flood pairs with and without the topology producer's resends (records sent again), from bench progress logs.

usage: retries.py LOG... ; each LOG a bench progress/log file (plain or .gz). Prints, per file, every flood pair
(warm-up pairs marked w) as ratio(resends), and pooled: the topology / pass-through ratio, topology events/s and
topology CPU ms per 1,000 events in measured pairs with resends (>= 1,000 records) and without (< 1,000)."""
import gzip, re, statistics as st, sys

TOPO = re.compile(r'^  upsert topology \(appends on\)\s+([\d,]+) events/s.*?([\d.]+) ms CPU per 1,000 events.*?([\d,]+) records sent again')
PASS = re.compile(r'^  pass-through Streams\s+([\d,]+) events/s')
PAIR = re.compile(r'^flood (warm-up pair|pair) (\d+)')

def num(s):
    return float(s.replace(',', ''))

def pairs(path):
    opener = gzip.open if path.endswith('.gz') else open
    out, kind, topo = [], None, None
    with opener(path, 'rt', errors='replace') as f:
        for line in f:
            m = PAIR.match(line)
            if m:
                kind, topo = ('w' if m.group(1).startswith('warm') else 'p') + m.group(2), None
                continue
            m = TOPO.match(line)
            if m and kind:
                topo = (num(m.group(1)), float(m.group(2)), num(m.group(3)))
                continue
            m = PASS.match(line)
            if m and kind and topo:
                out.append((kind, topo[0] / num(m.group(1)), topo[0], topo[1], topo[2]))
                topo = None
    return out

def summary(label, rows):
    if not rows:
        print(f'  {label}: none')
        return
    r = [x[1] for x in rows]; e = [x[2] for x in rows]; c = [x[3] for x in rows]
    print(f'  {label}: {len(rows)} pairs, ratio {st.median(r):.2f}x ({min(r):.2f}-{max(r):.2f}), '
          f'topology {st.median(e):,.0f} events/s ({min(e):,.0f}-{max(e):,.0f}), CPU {st.median(c):.2f} ms/1,000 ({min(c):.2f}-{max(c):.2f})')

measured_with, measured_without = [], []
for path in sys.argv[1:]:
    rows = pairs(path)
    print(path + ': ' + ' '.join(f'{k}:{r:.2f}({int(n)})' for k, r, _, _, n in rows))
    for row in rows:
        if row[0].startswith('p'):
            (measured_with if row[4] >= 1000 else measured_without).append(row)
print('pooled, measured pairs:')
summary('with resends', measured_with)
summary('without', measured_without)
