import json,collections,sys
path=sys.argv[1]; prefix=sys.argv[2]; top=int(sys.argv[3]) if len(sys.argv)>3 else 60
d=json.load(open(path))
ev=[e for e in d['recording']['events'] if (e['values']['sampledThread'].get('javaName') or '').startswith(prefix)]
n=len(ev); print('samples',n)
incl=collections.Counter(); selfc=collections.Counter()
for e in ev:
    fr=e['values']['stackTrace']['frames']
    seen=set()
    for i,f in enumerate(fr):
        m=f['method']; name=m['type']['name'].split('.')[-1]+'.'+m['name']
        if i==0: selfc[name]+=1
        if name not in seen: seen.add(name); incl[name]+=1
print('--- inclusive');
for k,v in incl.most_common(top): print('%5.1f%% %s'%(100*v/n,k))
print('--- self')
for k,v in selfc.most_common(30): print('%5.1f%% %s'%(100*v/n,k))
