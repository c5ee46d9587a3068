"""The broker's WriteTxnMarkers requests of each app run in a flood-only bench, in commit order.

Reads a bench's full output written with kafka.request.logger at DEBUG for the transaction requests
(log4j2-txn-requests.xml beside this script). For each Streams app run (the topology or the pass-through
of one pair) it prints how long the broker took for each commit's markers (totalTimeMs, and the part
spent in the request handler, localTimeMs) and how many partitions they covered, then the medians of a
run's first three commits and of the rest. Usage: markers.py BENCH-OUTPUT.log
"""
import json
import re
import statistics
import sys
from collections import defaultdict

runs = defaultdict(list)
order = []
for line in open(sys.argv[1]):
    if 'Completed request:' not in line or 'WRITE_TXN_MARKERS' not in line:
        continue
    request = json.loads(line.split('Completed request:', 1)[1])
    topics = [t['name'] for t in request['request']['markers'][0]['topics']]
    app = 'pass-through' if any(t.endswith('.copy') for t in topics) else 'topology'
    pair = re.search(r'flood-(warmup\d+|p\d+)', ' '.join(topics)).group(1)
    partitions = sum(len(t['partitionIndexes']) for t in request['request']['markers'][0]['topics'])
    key = (pair, app)
    if key not in runs:
        order.append(key)
    runs[key].append((line[:12], partitions, request['totalTimeMs'], request['localTimeMs']))

first, rest = defaultdict(list), defaultdict(list)
for key in order:
    pair, app = key
    commits = runs[key]
    print(f'{pair:8s} {app:12s} ' + '  '.join(f'{p}p {t:.0f}/{l:.0f}ms' for _, p, t, l in commits))
    first[app] += [t for _, _, t, _ in commits[:3]]
    rest[app] += [t for _, _, t, _ in commits[3:]]
for app in first:
    print(f'{app}: first three commits of each run, median {statistics.median(first[app]):.1f} ms '
          f'(max {max(first[app]):.0f}, n={len(first[app])}); later commits median '
          f'{statistics.median(rest[app]):.1f} ms (max {max(rest[app]):.0f}, n={len(rest[app])})')
