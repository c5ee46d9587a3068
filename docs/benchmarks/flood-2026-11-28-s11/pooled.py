import json,sys,glob,statistics as st,os,collections
# pooled per-pair figures of each jar's runs: topology CPU ms per 1,000 events, throughput ratio, CPU ratio (same pair)
runs=collections.defaultdict(lambda: collections.defaultdict(list))
for d in glob.glob(sys.argv[1]+'/run*/'):
    tag=os.path.basename(d.rstrip('/')).split('-')[1]
    fl=json.load(open(d+'results.json'))['flood']
    t=[f for f in fl if f['app'].startswith('upsert')]; p=[f for f in fl if f['app'].startswith('pass')]
    for a,b in zip(t,p):
        runs[tag]['cpu'].append(a['appCpuMsPer1000Events']); runs[tag]['ratio'].append(a['eventsPerSec']/b['eventsPerSec'])
        runs[tag]['cpuratio'].append(a['appCpuMsPer1000Events']/b['appCpuMsPer1000Events'])
for tag,v in runs.items():
    print('%-6s pairs %d  topology CPU %.2f (%.2f-%.2f)  ratio %.2fx (%.2f-%.2f)  CPU topology/pass-through %.2fx (%.2f-%.2f)'%(tag,len(v['cpu']),
        st.median(v['cpu']),min(v['cpu']),max(v['cpu']),st.median(v['ratio']),min(v['ratio']),max(v['ratio']),
        st.median(v['cpuratio']),min(v['cpuratio']),max(v['cpuratio'])))
    print('       cpu-ratios', sorted(round(x,2) for x in v['cpuratio']))
