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
B=collections.OrderedDict()
B['mark']=('runtime.tryDeferToSpanScan','runtime.markroot','runtime.scanSpan','runtime.findObject','runtime.gcDrain','runtime.typePointers','runtime.wbBufFlush','runtime.greyobject','gcWriteBarrier','runtime.scanobject','runtime.scanblock','runtime.bulkBarrier','runtime.(*gcWork)','runtime.gcmark','runtime.pcvalue','runtime.scanframe','runtime.scanstack','runtime.(*unwinder)','runtime.funcInfo','runtime.step','runtime.readvarint','runtime.(*mspan).typePointers','runtime.spanOf','runtime.extractHeapBits','runtime.(*spanInlineMarkBits)','runtime.(*spanQueue)','runtime.scanObjectsSmall','runtime.gcDrainN','runtime.(*gcControllerState)','runtime.wbMove','runtime.atomicwb','runtime.freeDeadSpanSPMCs','runtime.shade','runtime.(*gcBits)','runtime.newMarkBits','runtime.gcBgMarkWorker','runtime.gcAssistAlloc','runtime.gcMarkDone','runtime.gcMarkTermination','runtime.gcStart','runtime.forEachP','runtime.(*mspan).markBitsForIndex','runtime.markBits','runtime.pcdatavalue','runtime.findfunc','runtime.(*stkframe)','runtime.getStackMap','runtime.adjustframe','runtime.(*spanSPMC)','runtime.(*lfstack)','runtime.gcFlushBgCredit','runtime.gcParkAssist')
B['sweep']=('runtime.(*sweepLocked)','runtime.(*mspan).sweep','runtime.sweepone','runtime.bgsweep','runtime.(*pageAlloc)','runtime.mergeSummaries','runtime.(*mheap).freeSpan','runtime.(*activeSweep)','runtime.(*sweepClass)','runtime.(*mspan).countAlloc','runtime.(*gcBitsArena)','runtime.(*mheap).nextSpanForSweep','runtime.(*mspan).reportZombies','runtime.deductSweepCredit')
B['alloc']=('runtime.mallocgc','runtime.heapSetType','runtime.(*mcache)','runtime.(*mcentral)','runtime.(*mheap)','runtime.(*mspan).init','runtime.(*mspan).nextFreeIndex','runtime.(*mspan).refillAllocCache','runtime.newobject','runtime.makeslice','runtime.(*mspan).writeHeapBits','runtime.nextFreeFast','runtime.memclrNoHeapPointers','runtime.newarray','runtime.growslice','runtime.rawstring','runtime.makemap','runtime.(*mspan).initHeapBits','runtime.(*mspan).divideByElemSize','runtime.publicationBarrier')
for f in sys.argv[1:]:
    d=load(f); tot=sum(d.values())/20000; out=[f"{f:22s} total {tot:7.0f}"]; rest=tot
    for b,pre in B.items():
        v=sum(x for k,x in d.items() if k.startswith(pre))/20000; rest-=v; out.append(f"{b} {v:6.0f}")
    out.append(f"rest {rest:7.0f}"); print("  ".join(out))
