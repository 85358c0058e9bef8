package h3

// STREAM data seen for the first time: per connection, direction and
// stream, the byte ranges already carried. A range carried again (a
// retransmission, a duplicate) is QUIC's cost, not the HTTP/3 layer's.
// A stream whose every byte up to its FIN was seen is marked done in a
// bitset (stream IDs are allocated in order, four types interleaved), so
// that memory stays small over millions of requests and a late duplicate
// is still recognised.

type coverKey struct {
	conn   uint64
	in     bool
	stream int64
}

type doneKey struct {
	conn uint64
	in   bool
	typ  int64 // stream ID mod 4: initiator and direction
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
func (l *LayerCounts) firstTime(k coverKey, off, n int64, fin bool) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	dk := doneKey{k.conn, k.in, k.stream & 3}
	idx := k.stream >> 2
	if b := l.done[dk]; b != nil && b.has(idx) {
		return 0
	}
	if l.cover == nil {
		l.cover = make(map[coverKey]*streamCover)
		l.done = make(map[doneKey]*bitset)
	}
	c := l.cover[k]
	if c == nil {
		c = &streamCover{fin: -1}
		l.cover[k] = c
	}
	added := c.add(off, n)
	if fin {
		c.fin = off + n
	}
	if c.complete() {
		delete(l.cover, k)
		b := l.done[dk]
		if b == nil {
			b = &bitset{}
			l.done[dk] = b
		}
		b.set(idx)
	}
	return added
}

// forget drops a closed connection's state.
func (l *LayerCounts) forget(conn uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k := range l.cover {
		if k.conn == conn {
			delete(l.cover, k)
		}
	}
	for k := range l.done {
		if k.conn == conn {
			delete(l.done, k)
		}
	}
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
