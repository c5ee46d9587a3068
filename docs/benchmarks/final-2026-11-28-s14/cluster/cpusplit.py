"""CPU seconds by role from cpusample.sh's lines (time pid role ticks), over the samples at which a gateway ran
(the fault runs) and over the rest (the throughput runs); a process's CPU between two of its samples counts once."""
import sys, collections
rows = [l.split() for l in open(sys.argv[1]) if len(l.split()) == 4]
by_time = collections.defaultdict(dict)
for t, p, r, s in rows:
    by_time[t][p] = (r, int(s))
times = sorted(by_time)
phase = {t: any(r.startswith('gateway') for r, _ in by_time[t].values()) for t in times}
cpu = {True: collections.defaultdict(float), False: collections.defaultdict(float)}
span = {True: 0, False: 0}
sec = lambda t: sum(int(x) * m for x, m in zip(t.split(':'), (3600, 60, 1)))
for a, b in zip(times, times[1:]):
    f = phase[a] and phase[b]
    span[f] += sec(b) - sec(a)
    for p, (r, s) in by_time[b].items():
        if p in by_time[a]:
            role = r.split('-')[0] if r.startswith('broker') else r
            cpu[f][role] += (s - by_time[a][p][1]) / 100.0
for f, name in ((True, 'fault runs'), (False, 'the rest (throughput runs, start-up)')):
    tot = sum(cpu[f].values())
    print(f"{name}: {span[f]} s sampled, {2 * span[f]} core-seconds on 2 cores; the JVMs used {tot:.0f} s")
    print("| role | CPU s | share of the JVMs' CPU | cores |")
    print("|---|---|---|---|")
    for r, v in sorted(cpu[f].items(), key=lambda x: -x[1]):
        print(f"| {r} | {v:.0f} | {100 * v / tot:.0f} % | {v / max(span[f], 1):.2f} |")
