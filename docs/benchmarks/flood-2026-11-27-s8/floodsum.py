import json,sys,glob
for f in sorted(glob.glob(sys.argv[1]+'/run*/results.json')):
    d=json.load(open(f))
    fl=d['flood']
    pairs={}
    for x in fl: pairs.setdefault(x['pair'],{})[x['app'][:4]]=x
    out=[]
    for p,v in sorted(pairs.items()):
        t=v.get('upse') or v.get('topo'); pt=v.get('pass')
        out.append("%.2fx(%s r=%s cpu=%.2f/%.2f)"%(t['eventsPerSec']/pt['eventsPerSec'],p,t.get('producerRetries'),t['appCpuMsPer1000Events'],pt['appCpuMsPer1000Events']))
    print(f.split('/')[-2], ' '.join(out))
