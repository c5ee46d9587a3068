import json, collections, sys
d=json.load(open(sys.argv[1])); target=sys.argv[2]; app=sys.argv[3] if len(sys.argv)>3 else 'bench-flood-topology-p'
marks=sys.argv[4].split(',') if len(sys.argv)>4 else ['UpsertEmitter.emit','UpsertEmitter.withdraw','UpsertEmitter.tombstones','ItemAppends','StateCache','BeforeCommitStore','TaskManager.commit','punctuate','ChangeLogging','MeteredKeyValueStore.put','RecordCollectorImpl.send']
c=collections.Counter(); tot=0
for e in d['recording']['events']:
    v=e['values']; t=(v.get('sampledThread') or {}).get('javaName') or ''
    if app not in t or 'StreamThread' not in t: continue
    fr=[f['method']['type']['name'].split('/')[-1]+'.'+f['method']['name'] for f in v['stackTrace']['frames']]
    if not any(target in f for f in fr): continue
    tot+=1
    i=min(i for i,f in enumerate(fr) if target in f)
    path=[f for f in fr[i+1:] if any(m in f for m in marks)]
    c[' < '.join(dict.fromkeys(path[:4]))]+=1
print(tot)
for k,n in c.most_common(15): print(n,k)
