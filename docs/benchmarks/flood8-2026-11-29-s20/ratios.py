# Each run's measured flood pairs: the ratio (topology / pass-through) per pair and its median, both apps' events/s and CPU
# ms per 1,000 events, and the records the topology's producer sent again. Usage: ratios.py DIR (holding one dir per run)
import json,glob,os,statistics as st,sys
for d in sorted(glob.glob(sys.argv[1] + '/*/results.json')):
    r=json.load(open(d)); fl=r['flood']
    topo=[x for x in fl if x['app'].startswith('upsert')]; pt=[x for x in fl if x['app'].startswith('pass')]
    ratios=[t['eventsPerSec']/p['eventsPerSec'] for t,p in zip(topo,pt)]
    print(os.path.basename(os.path.dirname(d)), 'ratio med %.2f'%st.median(ratios), ['%.2f'%x for x in ratios],
      'topo', [int(t['eventsPerSec']) for t in topo], 'pt', [int(p['eventsPerSec']) for p in pt],
      'cpu', [t['appCpuMsPer1000Events'] for t in topo], [p['appCpuMsPer1000Events'] for p in pt],
      'retries', [t['producerRetries'] for t in topo])
