import gzip,re,sys
def ts(s):
    h,m,x=s.split(':'); return int(h)*3600+int(m)*60+float(x)
for p in sys.argv[1:]:
    op=gzip.open if p.endswith('.gz') else open
    t0=None; runs=[]; cur=None; ct=0
    for l in op(p,'rt',errors='replace'):
        m=re.match(r'(\d\d:\d\d:\d\d\.\d+) ',l)
        if m and t0 is None: t0=ts(m.group(1))
        m=re.search(r'^(\S+) INFO .*StreamsService - (bench-flood-topology-\S+): REBALANCING -> RUNNING',l)
        if m: cur=m.group(2); runs.append([cur,round(ts(m.group(1))-t0),0]); continue
        if cur and 'CONCURRENT_TRANSACTIONS' in l and 'flood-topology' in l: runs[-1][2]+=1
        if re.search(r'bench-flood-topology-\S+: RUNNING -> PENDING',l): cur=None
    print(p.split('/')[-1][:22], ' '.join(f"{r[0].split('-')[-1]}@{r[1]}s:{r[2]}" for r in runs))
