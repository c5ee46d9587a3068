# Samples every thread of a JVM every 5 ms; for threads in D state (uninterruptible), records the kernel stack.
import os,sys,time,collections
pid=sys.argv[1]; out=open(sys.argv[2],'w'); end=time.time()+float(sys.argv[3])
names={}
while time.time()<end:
    try: tids=os.listdir(f'/proc/{pid}/task')
    except FileNotFoundError: break
    for t in tids:
        try:
            st=open(f'/proc/{pid}/task/{t}/stat').read()
            state=st[st.rindex(')')+2]
            if state=='D':
                if t not in names: names[t]=open(f'/proc/{pid}/task/{t}/comm').read().strip()
                stack=open(f'/proc/{pid}/task/{t}/stack').read().replace('\n',' | ')
                out.write('%s %s %s %s\n'%(time.strftime('%H:%M:%S',time.gmtime())+('%.3f'%(time.time()%1))[1:],t,names[t],stack))
        except (FileNotFoundError,ProcessLookupError,ValueError): pass
    time.sleep(0.005)
