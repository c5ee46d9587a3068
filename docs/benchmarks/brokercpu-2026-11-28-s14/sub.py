"""For samples whose stack holds frame ARG1: count the frame just inside it (callee) at depth -- the frames between; also inclusive counts of any frame."""
import sys, collections
pat = sys.argv[1]; files = sys.argv[2:]
incl = collections.Counter(); n = 0; m = 0
for path in files:
    frames = []; ins = False
    for line in open(path, errors='replace'):
        s = line.strip()
        if s.startswith('stackTrace = ['): ins = True; frames = []
        elif ins and s == ']': ins = False
        elif ins and s and s != '...': frames.append(s.split('(')[0])
        elif s == '}':
            n += 1
            if any(pat in f for f in frames):
                m += 1
                for f in set(frames): incl[f] += 1
            frames = []
print(f"{m} of {n} samples hold {pat}")
for f, c in incl.most_common(60):
    print(f"{100*c/m:5.1f} % {c:5d} {f}")
