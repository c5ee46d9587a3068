import json,collections,re,sys
from datetime import datetime
d=json.load(open(sys.argv[1]))['recording']['events']
def t(e): return datetime.fromisoformat(e['values']['startTime'].replace('Z','+00:00')).timestamp()
th=[e for e in d if e['type']=='jdk.ThreadCPULoad']
def cat(n):
    if 'Compiler' in n: return 'JIT'
    if 'StreamThread-1-producer' in n: return 'app producer'
    if 'StreamThread' in n: return 'app stream'
    if n.startswith('bench-tail'): return 'tail'
    if n.startswith('data-plane') or 'kafka-' in n or 'Txn' in n or 'Reaper' in n or 'coordinator' in n or 'raft' in n or 'executor' in n or 'log-' in n: return 'broker'
    if n.startswith('JFR'): return 'jfr'
    return 'other:'+n
for app in sys.argv[2:]:
    st=[e for e in th if app in e['values']['eventThread']['javaName'] and e['values']['eventThread']['javaName'].endswith('StreamThread-1') and e['values']['user']+e['values']['system']>0.1]
    t0=min(t(e) for e in st); t1=max(t(e) for e in st)
    tot=collections.Counter()
    for e in th:
        if t0<=t(e)<=t1:
            tot[cat(e['values']['eventThread']['javaName'])]+=(e['values']['user']+e['values']['system'])
    n=len([e for e in d if e['type']=='jdk.CPULoad' and t0<=t(e)<=t1])
    mach=[e['values']['machineTotal'] for e in d if e['type']=='jdk.CPULoad' and t0<=t(e)<=t1]
    per=max(1,len(mach))
    print(app, 'window %.2fs'%(t1-t0+0.1), 'machine avg %.2f'%(sum(mach)/per))
    for k,v in sorted(tot.items(),key=lambda x:-x[1])[:12]: print('   %-30s %.2f cores'%(k, 2*v/per))
