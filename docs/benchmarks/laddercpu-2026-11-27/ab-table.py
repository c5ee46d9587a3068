import json,sys
for path in sys.argv[1:]:
    r=json.load(open(path+'/results.json'))
    load=open(path+'.load').read().split('\n')
    print('##',path.split('/')[-1], '|', ' / '.join(l.split(' ')[0]+' '+l.split(' ')[1]+' load '+' '.join(l.split(' ')[2:5]) for l in load if l))
    for step in r['ladder']:
        for i,t in enumerate(step['topology']):
            p=step['passThrough'][i] if i < len(step['passThrough']) else {}
            print(f"  {step['turns']:>5} pair {i+1}: appends p99 {t['appendLatency']['p99']:7.0f}  emit p99 {t['emitLatency']['p99']:7.0f}  content p99 {t['contentLatency']['p99']:7.0f}  appCpu {t['appCpuMsPer1000Events']:5.1f}  procCpu {t['processCpuMsPer1000Events']:5.1f}  sustained {t['sustained']}  gcMs {t.get('gcMs')}  retries {t.get('producerRetries')} | pass-through emit p99 {p.get('emitLatency',{}).get('p99',0):5.0f} appCpu {p.get('appCpuMsPer1000Events',0):4.1f} procCpu {p.get('processCpuMsPer1000Events',0):5.1f}")
