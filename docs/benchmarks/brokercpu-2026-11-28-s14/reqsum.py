"""Request rates per API from ReqRates lines (time pid node api count): per broker process, its last count minus
its first (taken while a gateway ran: cpu.txt's gateway samples bound the fault runs), summed over brokers."""
import sys, collections
rows = [l.split() for l in open(sys.argv[1]) if len(l.split()) == 5]
first, last = {}, {}
sec = lambda t: sum(int(x) * m for x, m in zip(t.split(':'), (3600, 60, 1)))
lo, hi = (sec(sys.argv[2]), sec(sys.argv[3])) if len(sys.argv) > 3 else (0, 10**9)
for t, pid, node, api, c in rows:
    if api == "Fetch": continue  # FetchConsumer + FetchFollower
    if not lo <= sec(t) <= hi: continue
    k = (pid, api)
    first.setdefault(k, (sec(t), int(c))); last[k] = (sec(t), int(c))
tot = collections.Counter(); span = collections.defaultdict(int)
for k in last:
    tot[k[1]] += last[k][1] - first[k][1]
    span[k[0]] = max(span[k[0]], last[k][0] - first[k][0])
secs = sum(span.values()) / 3  # cluster-seconds: three brokers at a time
print(f"brokers: {len(span)} processes, {secs:.0f} s of a three-broker cluster")
all_ = sum(tot.values())
print("| request | count | per s, all brokers | share |")
print("|---|---|---|---|")
for api, c in tot.most_common():
    if c: print(f"| {api} | {c} | {c / secs if secs else 0:.0f} | {100*c/all_:.1f} % |")
