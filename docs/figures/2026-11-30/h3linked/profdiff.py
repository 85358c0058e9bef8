#!/usr/bin/env python3
# profdiff.py LINKED_RUNS OURS_RUNS: CPU per request by category from `go tool pprof -top -nodefraction=0 -unit=ms` of each profile (NAME.top) over the requests its client counted (cl-NAME); runs comma-separated, averaged.
import sys, re, collections
def cat(fn):
    rules=[('stack growth',r'runtime\.(step|pcvalue|adjustframe|adjustpointers|findfunc|copystack|newstack|.*textAddr|.*getStackMap|.*unwinder|funcInfo|funcdata|pcdatavalue|adjustsudogs|adjustctxt|adjustdefers|morestack|.*stkframe|readvarint|stackalloc|stackfree|stackcacherefill|stackpoolalloc|funcMaxSPDelta)'),
           ('GC',r'runtime\.(.*scan|.*mark|gc|.*Span|greyobject|findObject|.*sweep|tryDefer|wbBuf|.*Mark|bulkBarrier|typePointers|.*gcBits|spanOf|heapBitsSmallForAddr|.*Bitmap|markBits|.*spanClass|.*WorkBuf|getempty|putfull|trygetfull|handoff|.*gcw|.*gcController|.*assist|.*pacer)|gcWriteBarrier'),
           ('malloc',r'runtime\.(malloc|.*mcache|.*mcentral|nextFreeFast|memclr|.*nextFree|refill|.*allocSpan|.*heapBits|newobject|makeslice|growslice|rawstring|rawbyteslice|.*allocCount|writeHeapBits)'),
           ('syscalls',r'^(syscall\.|internal/runtime/syscall|runtime/internal/syscall|golang.org/x/sys)'),
           ('scheduler, futex, idle',r'runtime\.(futex|schedule|findRunnable|park|ready|goready|.*netpoll|stealWork|runqgrab|notesleep|mcall|gopark|usleep|nanotime|epollwait|osyield|procyield|lock|unlock|wakep|startm|stopm|execute|gosched|semasleep|semawakeup|resetspinning|checkTimers|runtimer|gogo|goexit)'),
           ('runtime other',r'^runtime\.|internal/runtime|^sync|^internal/sync')]
    for name,rx in rules:
        if re.search(rx,fn): return name
    if fn.startswith('github.com/quic-go') or 'qpack' in fn: return 'quic-go/qpack'
    if 'wirebench' in fn: return 'ours'
    if fn.startswith('crypto') or 'aes' in fn or 'gcm' in fn.lower(): return 'crypto'
    return 'libraries (net/http, json, textproto, ...)'
def load(f):
    d={}
    for line in open(f):
        m=re.match(r'\s*([\d.]+)ms\s+[\d.]+%\s+[\d.]+%\s+[\d.]+ms\s+[\d.]+%\s+(.*)$',line)
        if m: d[m.group(2).strip()]=float(m.group(1))
    return d
def req(f):
    return int(open(f).read().split()[1])
pairs=[sys.argv[1],sys.argv[2]]
tot=collections.defaultdict(lambda: collections.Counter()); fns=collections.defaultdict(lambda: collections.Counter())
for name,runs in [('A',pairs[0]),('B',pairs[1])]:
    for r in runs.split(','):
        d=load(r+'.top'); n=req('cl-'+r)
        for k,v in d.items():
            tot[name][cat(k)]+=v*1000/n/len(runs.split(','))
            fns[name][k]+=v*1000/n/len(runs.split(','))
A,B=tot['A'],tot['B']
print("%-45s %8s %8s %8s"%("category (us/request, mean of runs)","A","B","B-A"))
for k in sorted(set(A)|set(B), key=lambda k:-(B[k]-A[k])):
    print("%-45s %8.2f %8.2f %+8.2f"%(k,A[k],B[k],B[k]-A[k]))
print("%-45s %8.2f %8.2f %+8.2f"%("total",sum(A.values()),sum(B.values()),sum(B.values())-sum(A.values())))
print()
fa,fb=fns['A'],fns['B']
for k in sorted(set(fa)|set(fb), key=lambda k:-abs(fb[k]-fa[k]))[:25]:
    print("%+7.2f  %s"%(fb[k]-fa[k],k))
