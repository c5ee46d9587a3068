#!/usr/bin/env python3
"""Per fault run of bench --cluster output dirs: the survivor's main-consumer pause and resume calls and the fetched
data its FetchCollector set aside because the partition was paused (log4j2-takeover-diag.xml: ClassicKafkaConsumer and
FetchCollector at DEBUG). Reuses takeover4's analyze.py (clock, survivor). Helper takeover5.
usage: pauses.py DIR [DIR...]"""
import datetime as dt, json, os, re, runpy, sys

dirs, sys.argv[1:] = sys.argv[1:], []
A = runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'takeover4-2026-11-28-s13', 'analyze.py'))
PATS = (('paused', 'Pausing partitions'), ('resumed', 'Resuming partitions'), ('set-aside', 'because it is paused'))

for d in dirs:
    for run in json.load(open(os.path.join(d, 'cluster-results.json')))['faultRuns']:
        f = [f for f in run.get('faults') or [] if f['what'] == 'topology instance']
        if not f: continue
        k = dt.datetime.fromisoformat(f[0]['killedAt'].replace('Z', '+00:00'))
        s = A['survivor'](os.path.join(d, 'logs', f"fault-run-{run['run']}"), k)
        if not s: continue
        res = []
        for label, pat in PATS:
            hits = [l for l in s[1] if pat in l and re.search(r'StreamThread-\d+-consumer\b', l)]
            res.append(f'{label} {len(hits)} ({len([l for l in hits if 0 <= A["clock"](k, l) < 60])} in 0-60 s)')
        print(f"{os.path.basename(d)} run {run['run']}: {s[0]} main consumer: " + ', '.join(res))
