#!/usr/bin/env python3
"""Callers of a self frame in a flood bench's JFR (jfr print --json): for the samples whose top frame contains SELF,
the N frames above it, counted. Usage: callers.py run.json SELF [N] [app-thread-substring]"""
import json, sys, collections
d = json.load(open(sys.argv[1])); self_ = sys.argv[2]; n = int(sys.argv[3]) if len(sys.argv) > 3 else 4
app = sys.argv[4] if len(sys.argv) > 4 else 'bench-flood-topology-p'
paths = collections.Counter(); tot = 0; hit = 0
for e in d['recording']['events']:
    v = e['values']; t = (v.get('sampledThread') or {}).get('javaName') or ''
    if app not in t or 'StreamThread' not in t: continue
    tot += 1
    fr = [f['method']['type']['name'].split('/')[-1] + '.' + f['method']['name'] for f in (v['stackTrace'] or {}).get('frames', [])]
    if not fr or self_ not in fr[0]: continue
    hit += 1
    paths[' <- '.join(fr[1:n + 1])] += 1
print('thread samples', tot, 'with top frame', self_, hit)
for p, c in paths.most_common(25):
    print('%5d %5.1f%% %s' % (c, 100.0 * c / tot, p))
