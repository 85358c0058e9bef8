package h3

import "sync"

// STREAM data seen for the first time: per direction and stream of one
// connection, the byte ranges already carried. A range carried again (a
// retransmission, a duplicate) is QUIC's cost, not the HTTP/3 layer's.
// A stream whose every byte up to its FIN was seen is marked done in a
// bitset (stream IDs are allocated in order, four types interleaved), so
// that memory stays small over millions of requests and a late duplicate
// is still recognised. The state is the connection's (its trace's): it
// goes when the connection does, and connections never wait on each
// other's lock.

type coverKey struct {
	in     bool
	stream int64
}

// cover is one connection's STREAM data seen. It is safe for concurrent
// use (quic-go logs a connection's packets from its own goroutine; the
// lock is for the rest).
type cover struct {
	mu      sync.Mutex
	streams map[coverKey]*streamCover // streams seen in part
	done    [2][4]bitset              // [in][stream ID mod 4]: streams seen whole
}

// streamCover is the ranges [from, to) of one stream seen so far, sorted
// and disjoint, and the stream's final size once a FIN was seen (-1 before).
type streamCover struct {
	r   [][2]int64
	fin int64
}

// add marks [off, off+n) seen and returns how many of its bytes were new.
func (c *streamCover) add(off, n int64) int64 {
	if n <= 0 {
		return 0
	}
	from, to := off, off+n
	var out [][2]int64
	newBytes := n
	for _, r := range c.r {
		switch {
		case r[1] < from || r[0] > to: // apart
			out = append(out, r)
		default: // overlaps or touches: merge
			newBytes -= max(0, min(r[1], off+n)-max(r[0], off))
			from, to = min(from, r[0]), max(to, r[1])
		}
	}
	out = append(out, [2]int64{from, to})
	sortRanges(out)
	c.r = out
	return newBytes
}

func sortRanges(r [][2]int64) {
	for i := 1; i < len(r); i++ {
		for j := i; j > 0 && r[j][0] < r[j-1][0]; j-- {
			r[j], r[j-1] = r[j-1], r[j]
		}
	}
}

// complete is whether every byte up to the FIN was seen.
func (c *streamCover) complete() bool {
	return c.fin >= 0 && (c.fin == 0 || (len(c.r) == 1 && c.r[0][0] == 0 && c.r[0][1] >= c.fin))
}

// firstTime records a STREAM frame and returns its data bytes not seen
// before on that stream.
func (c *cover) firstTime(k coverKey, off, n int64, fin bool) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := &c.done[dir(k.in)][k.stream&3]
	idx := k.stream >> 2
	if b.has(idx) {
		return 0
	}
	sc := c.streams[k]
	if sc == nil {
		if off == 0 && fin { // the whole stream in one frame, the usual request and reply
			b.set(idx)
			return max(n, 0)
		}
		if c.streams == nil {
			c.streams = make(map[coverKey]*streamCover)
		}
		sc = &streamCover{fin: -1}
		c.streams[k] = sc
	}
	added := sc.add(off, n)
	if fin {
		sc.fin = off + n
	}
	if sc.complete() {
		delete(c.streams, k)
		b.set(idx)
	}
	return added
}

func dir(in bool) int {
	if in {
		return 1
	}
	return 0
}

type bitset struct{ w []uint64 }

func (b *bitset) has(i int64) bool {
	return i >= 0 && int(i>>6) < len(b.w) && b.w[i>>6]&(1<<(i&63)) != 0
}

func (b *bitset) set(i int64) {
	for int(i>>6) >= len(b.w) {
		b.w = append(b.w, 0)
	}
	b.w[i>>6] |= 1 << (i & 63)
}
