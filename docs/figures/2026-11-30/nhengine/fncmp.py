import sys,collections
def load(path):
    d=collections.Counter(); fn=None
    for line in open(path):
        if line.startswith('fn='): fn=line[3:].strip(); continue
        if line.startswith('fl='): continue
        if fn and line[:1].isdigit():
            parts=line.split()
            if len(parts)>=2: d[fn]+=int(parts[1])
    return d
a=load(sys.argv[1]); b=load(sys.argv[2]); k=float(sys.argv[3]) if len(sys.argv)>3 else 20000
keys=set(a)|set(b)
rows=sorted(keys,key=lambda f:-(abs(a[f]-b[f])))
print("ours  bare  diff per GET")
ta=sum(a.values())/k; tb=sum(b.values())/k
print(f"{ta:8.0f} {tb:8.0f} {ta-tb:8.0f} TOTAL")
for f in rows[:int(sys.argv[4]) if len(sys.argv)>4 else 70]:
    print(f"{a[f]/k:8.1f} {b[f]/k:8.1f} {(a[f]-b[f])/k:8.1f} {f}")
