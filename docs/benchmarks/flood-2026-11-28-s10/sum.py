import json,sys,glob,statistics as st,os
for d in sorted(glob.glob(sys.argv[1]+'/run*/'), key=lambda p:int(os.path.basename(p.rstrip('/')).split('-')[0][3:])):
    fl=json.load(open(d+'results.json'))['flood']
    t=[f for f in fl if f['app'].startswith('upsert')]; p=[f for f in fl if f['app'].startswith('pass')]
    ratio=[a['eventsPerSec']/b['eventsPerSec'] for a,b in zip(t,p)]
    cpu=[a['appCpuMsPer1000Events'] for a in t]; pc=[b['appCpuMsPer1000Events'] for b in p]
    cr=[a/b for a,b in zip(cpu,pc)]
    print('%-26s ratio %.2fx (%.2f-%.2f) topoCPU %.2f (%.2f-%.2f) [%s] pass %.2f cpu-ratio %.2fx (%.2f-%.2f) win %s'%(os.path.basename(d.rstrip('/')),st.median(ratio),min(ratio),max(ratio),st.median(cpu),min(cpu),max(cpu),' '.join(map(str,cpu)),st.median(pc),st.median(cr),min(cr),max(cr),[a['seconds'] for a in t]))
