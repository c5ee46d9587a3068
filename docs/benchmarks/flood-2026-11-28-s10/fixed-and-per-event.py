# Seconds of a flood window = fixed + events * per-event, fitted through two sizes' medians: the 300,000-event A/B of the
# ninth session (the scanner's jar, 6 pairs) and the two full runs of the ninth session (1,000,000 events, 10 pairs).
# Run from docs/benchmarks.
import json, statistics as st
def windows(paths):
    r = {'upsert': [], 'pass': []}
    for p in paths:
        for f in json.load(open(p))['flood']:
            k = 'upsert' if f['app'].startswith('upsert') else 'pass' if f['app'].startswith('pass') else None
            if k:
                r[k].append((f['seconds'], f['appCpuMsPer1000Events'], f['jitMs'], f['events']))
    return r
big = windows(['pairs-2026-11-27-s9/run1/results.json', 'pairs-2026-11-27-s9/run2/results.json'])
small = windows(['flood-2026-11-27-s9/run2-scanner-52dc1de/results.json', 'flood-2026-11-27-s9/run4-scanner-52dc1de/results.json'])
for k in ['upsert', 'pass']:
    b, s = big[k], small[k]
    mb, ms = st.median(x[0] for x in b), st.median(x[0] for x in s)
    slope = (mb - ms) / (b[0][3] - s[0][3])
    print('%-6s 300k: window %.2f s (%.2f-%.2f), JIT in window %d ms, CPU %.2f ms/1,000 | 1M: window %.2f s (%.2f-%.2f), JIT %d ms,'
          ' CPU %.2f | per event %.2f us, fixed %.2f s' % (
              k, ms, min(x[0] for x in s), max(x[0] for x in s), st.median(x[2] for x in s), st.median(x[1] for x in s),
              mb, min(x[0] for x in b), max(x[0] for x in b), st.median(x[2] for x in b), st.median(x[1] for x in b),
              slope * 1e6, ms - slope * s[0][3]))
