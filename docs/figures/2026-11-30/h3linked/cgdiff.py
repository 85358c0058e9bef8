#!/usr/bin/env python3
# cgdiff.py A.cg B.cg N NAME_A NAME_B [TOP]: instructions per request by category (function-name rules below) and the largest function differences, from two cachegrind files each a difference of N requests (bench/h3-instr.sh PROFILE=).
import sys, re, collections
def load(p):
    d=collections.Counter(); cur=None; ev=None
    fl=fn=None
    for line in open(p):
        if line.startswith('events:'): ev=line.split()[1:]
        elif line.startswith('fl='): fl=line[3:].strip()
        elif line.startswith('fn='): fn=line[3:].strip()
        elif line[:1].isdigit() or line[:1]=='-':
            parts=line.split()
            if len(parts)>=2 and fn: d[fn]+=int(parts[1])
    return d
def cat(fn):
    rules=[('stack growth',r'runtime\.(step|pcvalue|adjustframe|adjustpointers|findfunc|copystack|newstack|.*textAddr|.*getStackMap|.*unwinder|funcInfo|funcdata|pcdatavalue|adjustsudogs|adjustctxt|adjustdefers|morestack|.*stkframe|readvarint|stackalloc|stackfree|stackcacherefill|stackpoolalloc)'),
           ('GC',r'runtime\.(.*scan|.*mark|gc|.*Span|greyobject|findObject|.*sweep|tryDefer|wbBuf|.*Mark|bulkBarrier|typePointers|.*gcBits|spanOf|heapBitsSmallForAddr|.*Bitmap|markBits|.*spanClass|.*WorkBuf|getempty|putfull|trygetfull|handoff|.*gcw|.*gcController|.*assist|.*pacer)'),
           ('malloc',r'runtime\.(malloc|.*mcache|.*mcentral|nextFreeFast|memclr|.*nextFree|refill|.*allocSpan|.*heapBits|newobject|makeslice|growslice|rawstring|rawbyteslice|.*allocCount|writeHeapBits)'),
           ('runtime other',r'^runtime\.|internal/runtime|^sync|^internal/sync')]
    for name,rx in rules:
        if re.search(rx,fn): return name
    if fn.startswith('github.com/quic-go') or 'qpack' in fn: return 'quic-go/qpack'
    if 'wirebench' in fn: return 'ours'
    return 'libraries (net/http, json, textproto, crypto, ...)'
a=load(sys.argv[1]); b=load(sys.argv[2]); n=float(sys.argv[3])
ca=collections.Counter(); cb=collections.Counter()
for k,v in a.items(): ca[cat(k)]+=v
for k,v in b.items(): cb[cat(k)]+=v
print("%-50s %10s %10s %10s"%("category", sys.argv[4], sys.argv[5], "diff"))
for k in sorted(set(ca)|set(cb), key=lambda k:-(cb[k]-ca[k])):
    print("%-50s %10.1f %10.1f %+10.1f"%(k, ca[k]/n/1000, cb[k]/n/1000, (cb[k]-ca[k])/n/1000))
print("%-50s %10.1f %10.1f %+10.1f"%("total (k instr/req)", sum(ca.values())/n/1000, sum(cb.values())/n/1000, (sum(cb.values())-sum(ca.values()))/n/1000))
print("\ntop function diffs (instr/req):")
diff={k:(b.get(k,0)-a.get(k,0))/n for k in set(a)|set(b)}
for k in sorted(diff,key=lambda k:-abs(diff[k]))[:int(sys.argv[6]) if len(sys.argv)>6 else 25]:
    print("%+9.0f  %s"%(diff[k],k))
