import json, sys, re, datetime as dt
d, run, name, lo, hi = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
r = json.load(open(d + '/cluster-results.json'))
f = [f for f in r['faultRuns'][run-1]['faults'] if f['what'] == 'topology instance'][0]
k = dt.datetime.fromisoformat(f['killedAt'].replace('Z', '+00:00'))
print('killed', k)
for l in open(f"{d}/logs/fault-run-{run}/{name}", errors='replace'):
    m = re.match(r'(\d\d):(\d\d):(\d\d)\.(\d\d\d)', l)
    if not m: continue
    x = dt.datetime(k.year, k.month, k.day, int(m[1]), int(m[2]), int(m[3]), int(m[4]) * 1000, tzinfo=dt.timezone.utc)
    t = (x - k).total_seconds()
    if lo <= t <= hi: print(f'{t:7.2f}', l.rstrip()[:260])
