"""Summarise `jfr print --stack-depth 64 --events jdk.ExecutionSample` text of one or more files: samples by thread
group, by top frame, and by 'work' buckets (first matching frame from the top of the stack)."""
import sys, re, collections
def group(t):
    t = re.sub(r'\d+', 'N', t)
    return t
BUCKETS = [  # (name, substring in any frame) first match from the top of the stack wins... checked outermost->innermost below
    ('produce: append to log', 'ReplicaManager.appendRecords'),
    ('produce: append to log', 'ReplicaManager.appendRecordsToLeader'),
    ('fetch (consumers and followers) read', 'ReplicaManager.fetchMessages'),
    ('fetch: readFromLog', 'ReplicaManager.readFromLog'),
    ('follower: append fetched data', 'ReplicaFetcherThread'),
    ('follower: append fetched data', 'AbstractFetcherThread'),
    ('txn coordinator', 'TransactionCoordinator'),
    ('txn markers: send', 'TransactionMarkerChannelManager'),
    ('txn markers: write (broker side)', 'handleWriteTxnMarkers'),
    ('group coordinator', 'coordinator.group'),
    ('coordinator runtime', 'coordinator.common.runtime'),
    ('network: socket/selector', 'network.Selector'),
    ('network: socket/selector', 'SocketServer'),
    ('metadata / raft', 'raft.'),
    ('metadata / raft', 'metadata.'),
    ('purgatory / delayed ops', 'DelayedOperation'),
    ('purgatory / delayed ops', 'purgatory'),
]
threads = collections.Counter(); top = collections.Counter(); bucket = collections.Counter(); apis = collections.Counter()
n = 0
for path in sys.argv[1:]:
    cur_thread = None; frames = []; in_stack = False
    for line in open(path, errors='replace'):
        s = line.strip()
        if s.startswith('sampledThread = '):
            cur_thread = s.split('"')[1]
        elif s.startswith('stackTrace = ['):
            in_stack = True; frames = []
        elif in_stack and s == ']':
            in_stack = False
        elif in_stack and s and s != '...':
            frames.append(s.split('(')[0] if '(' in s else s)
        elif s == '}' and cur_thread is not None:
            n += 1
            threads[group(cur_thread)] += 1
            if frames:
                top[frames[0]] += 1
            b = 'other'
            for f in reversed(frames):  # outermost first: the most specific handler that owns the work
                pass
            found = None
            for f in frames:  # innermost first
                for name, sub in BUCKETS:
                    if sub in f:
                        found = name
                if found: break
            # prefer the outermost request kind: handle(...) methods of KafkaApis
            for f in reversed(frames):
                m = re.search(r'KafkaApis\.(handle\w+)', f)
                if m:
                    apis[m.group(1)] += 1; break
            bucket[found or 'other'] += 1
            cur_thread = None; frames = []
print(f"{n} samples")
def show(title, c, k=25):
    print(f"\n{title}")
    for key, v in c.most_common(k):
        print(f"{100*v/n:5.1f} %  {v:6d}  {key}")
show('by thread (digits -> N)', threads)
show('by KafkaApis handler on the stack (request handler threads)', apis)
show('by top frame', top, 30)
