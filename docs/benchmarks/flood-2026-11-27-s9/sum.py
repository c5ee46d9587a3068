import json,sys,glob,os,statistics as st
for d in sorted(glob.glob(sys.argv[1]+'/run*/results.json'), key=lambda p:int(os.path.basename(os.path.dirname(p)).split('-')[0][3:])):
    r=json.load(open(d)); r=r.get('flood',r) if isinstance(r,dict) else r
    t=[x for x in r if x['app'].startswith('upsert')]; p=[x for x in r if x['app'].startswith('pass')]
    ratio=[a['eventsPerSec']/b['eventsPerSec'] for a,b in zip(t,p)]
    tc=[a['appCpuMsPer1000Events'] for a in t]; pc=[b['appCpuMsPer1000Events'] for b in p]
    print('%-28s ratio %.2fx (%.2f-%.2f)  topo CPU %.2f (%.2f-%.2f)  pass %.2f  cpu ratio %.2fx' % (os.path.basename(os.path.dirname(d)), st.median(ratio),min(ratio),max(ratio), st.median(tc),min(tc),max(tc), st.median(pc), st.median([a/b for a,b in zip(tc,pc)])))
