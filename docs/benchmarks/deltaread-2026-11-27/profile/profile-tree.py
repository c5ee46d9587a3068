import json, collections, sys
d=json.load(open(sys.argv[1])); root=sys.argv[2]; depth=int(sys.argv[3]) if len(sys.argv)>3 else 3
app=sys.argv[4] if len(sys.argv)>4 else 'bench-flood-topology-p'
tree=collections.Counter(); tot=0; all_=0
for e in d['recording']['events']:
    v=e['values']; t=(v.get('sampledThread') or {}).get('javaName') or ''
    if app not in t or 'StreamThread' not in t: continue
    all_+=1
    fr=[f['method']['type']['name'].split('/')[-1]+'.'+f['method']['name'] for f in v['stackTrace']['frames']]
    idx=[i for i,f in enumerate(fr) if root in f]
    if not idx: continue
    tot+=1
    i=max(idx)
    path=tuple(reversed(fr[max(0,i-depth):i+1]))
    for k in range(1,len(path)+1): tree[path[:k]]+=1
print('thread samples',all_,'under',root,tot)
for p,n in sorted(tree.items()):
    if n>=max(3,tot//100): print('%5d %5.1f%% %s%s'%(n,100*n/all_,'  '*(len(p)-1),p[-1]))
