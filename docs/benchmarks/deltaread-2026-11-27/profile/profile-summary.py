#!/usr/bin/env python3
"""Summarise jdk.ExecutionSample of a flood bench's JFR: per app's measured stream threads, share of samples per frame
(inclusive: a sample counts once for a frame anywhere in its stack). Usage: jfr-json-file [frame substrings...]"""
import json, sys, collections
data = json.load(open(sys.argv[1]))
events = data['recording']['events']
apps = {'topology': 'bench-flood-topology-p', 'pass-through': 'bench-flood-passthrough-p'}
counts = {a: collections.Counter() for a in apps}
totals = collections.Counter()
tops = {a: collections.Counter() for a in apps}
for e in events:
    v = e['values']
    t = (v.get('sampledThread') or {}).get('javaName') or ''
    app = next((a for a, p in apps.items() if p in t and 'StreamThread' in t), None)
    if not app:
        continue
    totals[app] += 1
    frames = [f['method']['type']['name'] + '.' + f['method']['name'] for f in (v['stackTrace'] or {}).get('frames', [])]
    if frames:
        tops[app][frames[0]] += 1
    for f in set(frames):
        counts[app][f] += 1
print('samples', dict(totals), 'ratio topology/pass-through %.2f' % (totals['topology'] / max(1, totals['pass-through'])))
watch = sys.argv[2:] or ['UpsertProcessor.process', 'DeltaReader.read', 'Json.fromBytes', 'ObjectReader.createParser',
    'JsonFactory.createParser', 'TurnMachine.onEvent', 'UpsertEmitter.emit', 'StateCache.get', 'ItemBuffer.append',
    'StateCache.writeChanges', 'RecordCollectorImpl.send', 'TaskManager.commit', 'StreamThread.pollRequests',
    'punctuate', 'String.format', 'RecordAccumulator.appendNewBatch', 'TurnMachine.itemKey', 'HashMap.put',
    'ItemAppends.textAdded', 'GradientBatcher', 'CommitPacer', 'MDC']
for w in watch:
    row = []
    for a in apps:
        n = sum(c for f, c in counts[a].items() if w in f) if False else max([c for f, c in counts[a].items() if w in f] or [0])
        row.append('%s %5d (%4.1f%%)' % (a, n, 100.0 * n / max(1, totals[a])))
    print('%-36s %s' % (w, '   '.join(row)))
if '--top' in sys.argv or True:
    for a in apps:
        print('--- top self frames', a)
        for f, c in tops[a].most_common(25):
            print('%5d %4.1f%% %s' % (c, 100.0 * c / totals[a], f))
