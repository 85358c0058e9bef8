# bykind.py A.cg B.cg N: cachegrind files of two programs (cg_diff of bench/h3-instr.sh's two runs, PROFILE=DIR),
# their instructions per request (÷ N) by kind of work: the runtime's stack growth, GC and heap, malloc, quic-go, ours...
import sys,collections,re
def cat(fl,fn):
    f=fl.rsplit('/',1)[-1]
    if '/runtime/' in fl and '/internal/runtime' not in fl:
        if f in('stack.go','symtab.go','traceback.go','stkframe.go','symtabinl.go'): return 'rt:stack growth'
        if f.startswith('mgc') or f in('mbitmap.go','mwbbuf.go','mheap.go','mspanset.go','mcentral.go','mcache.go','msize.go','mfinal.go') or 'gcWriteBarrier' in fn or f=='mbarrier.go': return 'rt:gc+heap'
        if f=='malloc.go': return 'rt:malloc'
        if f in('proc.go','chan.go','select.go','sema.go','lock_spinbit.go','netpoll.go','netpoll_epoll.go','time.go','runtime2.go','preempt.go','lock_futex.go','os_linux.go','sys_linux_amd64.s','asm_amd64.s','proc_amd64.s','stubs.go'):
            if 'memmove' in fn or 'memclr' in fn or 'hash' in fn: return 'rt:mem'
            return 'rt:sched'
        if 'memmove' in f or 'memclr' in f: return 'rt:mem'
        return 'rt:other '+f
    if '/internal/runtime/maps' in fl: return 'maps'
    if 'quic-go/quic-go/http3' in fl: return 'quic-go/http3'
    if 'quic-go/qpack' in fl: return 'qpack'
    if 'quic-go/quic-go' in fl: return 'quic-go'
    if 'wirebench/wirebench' in fl:
        m=re.search(r'wirebench/wirebench/([^/]+)',fl); return 'ours:'+m.group(1)
    if 'github.com/wirebench/wirebench/' in fn:
        return 'ours:'+fn.split('github.com/wirebench/wirebench/')[1].split('.')[0]
    if '/crypto/' in fl or 'crypto' in fn: return 'crypto'
    if 'golang.org/x/net' in fl: return 'x/net '+fl.split('golang.org/x/net@')[-1].split('/',2)[1]
    m=re.search(r'/usr/local/go/src/(.+)/[^/]+$',fl)
    if m: return 'std:'+m.group(1)
    return 'other:'+fl
def load(p, events):
    d=collections.Counter(); fl=fn=''; idx=[0]
    for line in open(p):
        if line.startswith('events:'):
            names=line.split()[1:]
            idx=[names.index(e) for e in events]
        elif line.startswith('fl='): fl=line[3:].strip()
        elif line.startswith('fn='): fn=line[3:].strip()
        elif line[:1].isdigit() or line[:1]=='-':
            x=line.split()[1:]
            d[cat(fl,fn)]+=sum(int(x[i]) for i in idx if i < len(x))
    return d
# usage: bykind.py A.cg B.cg N [EVENT[+EVENT...]] (default Ir; with CACHE=1's files e.g. D1mr+D1mw)
ev=(sys.argv[4] if len(sys.argv)>4 else 'Ir').split('+')
a=load(sys.argv[1],ev); b=load(sys.argv[2],ev); n=float(sys.argv[3])
print("%9s %9s %9s  (%s per request)"%("bare","ours","diff",'+'.join(ev)))
print("%9.1f %9.1f %+9.1f  TOTAL"%(sum(a.values())/n,sum(b.values())/n,(sum(b.values())-sum(a.values()))/n))
tot=max(sum(a.values()),1)
for k in sorted(set(a)|set(b),key=lambda k:-max(a[k],b[k])):
    if max(a[k],b[k])/tot<0.001: continue
    print("%9.1f %9.1f %+9.1f  %s"%(a[k]/n,b[k]/n,(b[k]-a[k])/n,k))
