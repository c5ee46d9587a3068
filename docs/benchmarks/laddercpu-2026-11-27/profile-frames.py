import json,sys
rows=[('UpsertProcessor.process','a raw record (parse, machine, emits)'),
('READ','of it, reading the raw event (`WireFormat.read`; at 2e65086 `UpsertProcessor.read`, with DeltaReader)'),
('TurnMachine.appendDelta','of it, a delta (buffer, timers, emits)'),
('UpsertEmitter.emit','emitting an upsert (JSON, send)'),
('TurnMachine.onTick','the tick (deadlines, appends)'),
('TurnMachine.sendAppend','of it, sending appends'),
('StreamThread.maybeCommit','commits'),
('StateCache.writeChanges','of them, writing turns and items (JSON, store, changelog)'),
('ItemBuffer.writeOpenChunks','of them, writing chunks'),
('CachingKeyValueStore.*','the record cache (put, flush), all of it'),
('MeteredKeyValueStore.serializeValue','StateSerde JSON of turns and items'),
('RecordCollectorImpl.send','sends to the producer (sinks and changelogs)'),
]
out={}
for label,path in [('base',sys.argv[1]),('mine',sys.argv[2])]:
    d=json.load(open(path))
    ev=[e for e in d['recording']['events'] if (e['values']['sampledThread'].get('javaName') or '').startswith('bench-ladder-topology-1000')]
    n=len(ev); res={'n':n}
    for key,_ in rows:
        c=0
        for e in ev:
            names={f['method']['type']['name'].split('/')[-1]+'.'+f['method']['name'] for f in e['values']['stackTrace']['frames']}
            if key=='READ':
                if 'UpsertProcessor.read' in names or 'WireFormat$1.read' in names and 'UpsertProcessor.process' in names: c+=1
            elif key.endswith('.*'):
                if any(x.startswith(key[:-1]) for x in names): c+=1
            elif key in names: c+=1
        res[key]=100*c/n
    out[label]=res
print('| frame (inclusive, topology stream thread) | `db2bf1e` (%d samples) | `2e65086` (%d samples) |'%(out['base']['n'],out['mine']['n']))
print('|---|---|---|')
for key,desc in rows:
    print(('| %s | %.1f%% | %.1f%% |'%(desc,out['base'][key],out['mine'][key])) if key=='READ' else ('| %s: `%s` | %.1f%% | %.1f%% |'%(desc,key.replace('.*',''),out['base'][key],out['mine'][key])))
