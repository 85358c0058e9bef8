package replay

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"time"

	"github.com/wirebench/wirebench/load/replay/reqlog"
)

// Window bounds how far the schedule reads ahead of the requests being
// sent, and how far back in a file a request may be and still be put in
// time order: memory is flat in the file's size, at most about
// 2 × Window requests (with their bodies) held at once, and at most
// DefaultReadAhead bytes of them.
const Window = 1024

// DefaultReadAhead bounds the bytes of the requests read but not yet
// taken by a VU (bodies, targets, headers): 2 × Window entries of the
// 16-MiB entry bound would be 32 GiB. The reorder heap keeps at most half
// of it (so fewer large requests can be put back in order), and past the
// whole the reader waits for VUs to take requests; it always holds one
// request, whatever its size.
const DefaultReadAhead = 64 << 20

// Item is one scheduled request.
type Item struct {
	At  time.Duration // from the start of the run: recorded offset / speed
	Req reqlog.Request
	Op  int // endpoint (operation) index
}

// ScheduleOptions configure a Schedule. The zero Speed is 1.
type ScheduleOptions struct {
	// Speed divides the recorded offsets: 2 sends twice as fast.
	Speed float64
	// Loop repeats the recording, each pass one period later: its span
	// plus its mean gap between requests.
	Loop bool
	// Op assigns a request its operation; nil: 0.
	Op func(*reqlog.Request) int
	// MaxGap bounds the recorded time between two requests: a longer gap
	// is cut to MaxGap, counted (Stats.GapsCut). 0: DefaultMaxGap;
	// negative: no bound.
	MaxGap time.Duration
	// ReadAhead bounds the bytes read ahead (reqBytes of the requests
	// read and not yet taken); 0: DefaultReadAhead.
	ReadAhead int64
}

// DefaultMaxGap is the longest pause a replay keeps by default: a
// stray timestamp days away from the rest would otherwise hold every
// other request back past the run's end.
const DefaultMaxGap = 10 * time.Second

// Stats is what a schedule read, for the summary.
type Stats struct {
	Requests  int64    // scheduled (read and well-formed)
	Malformed int64    // lines or entries skipped, every pass
	Examples  []string // the first few of them
	Reordered int64    // earlier than a request already scheduled by more than Window (or the read-ahead bytes): sent at that one's time
	// ReadAheadWaits counts the times the reader waited for VUs to take
	// requests because those read ahead held ReadAhead bytes.
	ReadAheadWaits int64
	Passes         int // passes over the file (--loop)
	// PassRequests and PassSkipped are the first pass's well-formed
	// requests and skipped lines or entries: the recording's size.
	PassRequests, PassSkipped int64
	// Complete: the first pass was read to its end (else the run ended
	// first, and the recording held more than PassRequests).
	Complete   bool
	GapsCut    int64         // gaps longer than MaxGap, cut to it (every pass)
	LongestGap time.Duration // the longest of them, as recorded
	Span       time.Duration // first to last recorded request, unscaled
	Err        error         // a read error that ended the schedule early
	malformed  reqlog.Malformed
}

// Schedule is a load.Pacer of recorded times, read from a Source by a
// goroutine of its own a bounded window ahead. Due(k) is request k's
// time; the VU that sends request k takes it with Take(k). Safe for
// concurrent use.
type Schedule struct {
	o      ScheduleOptions
	ch     chan Item
	cancel context.CancelFunc
	done   chan struct{}

	pull    sync.Mutex // held by the Due pulling from ch
	mu      sync.Mutex
	next    uint64          // next request to pull from ch
	pending map[uint64]Item // pulled by Due, not yet taken
	closed  bool

	stats Stats // written by the reader until done closes

	// held is the bytes of the requests read and not yet taken, at
	// most o.ReadAhead (one request past it when alone); the reader
	// waits on room. A lock of its own: Due holds mu while it waits for
	// the reader.
	heldMu sync.Mutex
	held   int64
	room   *sync.Cond
	waits  int64 // Stats.ReadAheadWaits
}

// reqBytes is what a request holds in memory, near enough: its body,
// target and headers, and a little for the rest.
func reqBytes(r *reqlog.Request) int64 {
	n := int64(len(r.Body)+len(r.Target)+len(r.Method)) + 128
	for _, h := range r.Header {
		n += int64(len(h[0]) + len(h[1]) + 32)
	}
	return n
}

// fits tells whether n more bytes fit the read-ahead budget (always
// when nothing is held).
func (s *Schedule) fits(n int64) bool {
	s.heldMu.Lock()
	defer s.heldMu.Unlock()
	return s.held == 0 || s.held+n <= s.o.ReadAhead
}

// hold waits until n more bytes fit, then counts them; false when the
// schedule was closed first.
func (s *Schedule) hold(ctx context.Context, n int64) bool {
	s.heldMu.Lock()
	defer s.heldMu.Unlock()
	if s.held > 0 && s.held+n > s.o.ReadAhead {
		s.waits++
	}
	for s.held > 0 && s.held+n > s.o.ReadAhead {
		if ctx.Err() != nil {
			return false
		}
		s.room.Wait()
	}
	s.held += n
	return true
}

// NewSchedule starts reading: open is called once per pass (once
// without Loop) and its closer closed at the pass's end.
func NewSchedule(open func() (Source, io.Closer, error), o ScheduleOptions) (*Schedule, error) {
	if o.Speed == 0 {
		o.Speed = 1
	}
	if o.MaxGap == 0 {
		o.MaxGap = DefaultMaxGap
	}
	if o.ReadAhead <= 0 {
		o.ReadAhead = DefaultReadAhead
	}
	if !(o.Speed > 0) || math.IsInf(o.Speed, 0) || o.Speed > 1e9 {
		return nil, fmt.Errorf("%w: speed %g: want > 0 and at most 1e9", ErrReplay, o.Speed)
	}
	src, c, err := open()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Schedule{o: o, ch: make(chan Item, Window), cancel: cancel, done: make(chan struct{}), pending: map[uint64]Item{}}
	s.room = sync.NewCond(&s.heldMu)
	context.AfterFunc(ctx, func() {
		s.heldMu.Lock()
		s.room.Broadcast()
		s.heldMu.Unlock()
	})
	go s.read(ctx, open, src, c)
	// The reader emits its first request only once it holds a window of
	// them (or the whole recording): tens of milliseconds of parsing that
	// would make the first request late against the run's clock, which
	// starts after this returns.
	s.Due(0)
	return s, nil
}

// Due implements load.Pacer. It waits for the reader without holding mu,
// so that Take never waits behind it: the reader may be waiting for a
// Take to free read-ahead bytes.
func (s *Schedule) Due(hit uint64) (time.Duration, bool) {
	s.pull.Lock() // one VU at a time pulls from ch, in order
	defer s.pull.Unlock()
	for {
		s.mu.Lock()
		if it, ok := s.pending[hit]; ok {
			s.mu.Unlock()
			return it.At, false
		}
		if s.next > hit || s.closed {
			s.mu.Unlock()
			return 0, true
		}
		s.mu.Unlock()
		it, ok := <-s.ch
		s.mu.Lock()
		if ok {
			s.pending[s.next] = it
			s.next++
		} else {
			s.closed = true
		}
		s.mu.Unlock()
	}
}

// Take hands request hit to the VU that sends it (after Due(hit)).
func (s *Schedule) Take(hit uint64) (Item, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.pending[hit]
	delete(s.pending, hit)
	if ok {
		s.heldMu.Lock()
		s.held -= reqBytes(&it.Req)
		s.room.Broadcast()
		s.heldMu.Unlock()
	}
	return it, ok
}

// Close stops the reader and waits for it.
func (s *Schedule) Close() error {
	s.cancel()
	<-s.done
	return nil
}

// Stats returns what was read; complete after Close.
func (s *Schedule) Stats() Stats {
	select {
	case <-s.done:
		st := s.stats
		st.Malformed, st.Examples = st.malformed.N, st.malformed.Examples
		s.heldMu.Lock()
		st.ReadAheadWaits = s.waits
		s.heldMu.Unlock()
		return st
	default:
		return Stats{}
	}
}

// read is the reader goroutine: passes over the file, a reorder heap of
// Window requests, offsets from the first request, scaled by speed.
func (s *Schedule) read(ctx context.Context, open func() (Source, io.Closer, error), src Source, c io.Closer) {
	defer close(s.done)
	defer close(s.ch)
	var h reqHeap
	started, last := false, int64(0) // a request was sent out this pass; its recorded ns
	var off time.Duration            // its offset from the pass's first, gaps cut
	var period, lastOff time.Duration
	emit := func(r reqlog.Request) bool {
		if !started {
			started, last = true, r.At
		}
		if r.At < last { // beyond the window: cannot go back in time
			s.stats.Reordered++
			r.At = last
		}
		// The gap as unsigned: exact between any two int64 times (a
		// hostile log's MinInt64 and MaxInt64 included), where a signed
		// difference wrapped and sent requests early.
		gap := uint64(r.At) - uint64(last)
		if s.o.MaxGap > 0 && gap > uint64(s.o.MaxGap) {
			s.stats.GapsCut++
			s.stats.LongestGap = max(s.stats.LongestGap, time.Duration(min(gap, math.MaxInt64)))
			gap = uint64(s.o.MaxGap)
		}
		off = time.Duration(min(uint64(off)+min(gap, math.MaxInt64), math.MaxInt64))
		last = r.At
		s.stats.Span = max(s.stats.Span, off)
		at := time.Duration(float64(off+period*time.Duration(s.stats.Passes-1)) / s.o.Speed) // pass p starts p periods later
		if s.stats.Passes == 1 {
			lastOff = off
		}
		op := 0
		if s.o.Op != nil {
			op = s.o.Op(&r)
		}
		select {
		case s.ch <- Item{At: at, Req: r, Op: op}:
			s.stats.Requests++
			return true
		case <-ctx.Done():
			return false
		}
	}
	for {
		s.stats.Passes++
		ok := s.pass(ctx, src, &h, emit)
		c.Close()
		s.mergeMalformed(src.Malformed())
		if s.stats.Passes == 1 {
			s.stats.PassRequests, s.stats.PassSkipped, s.stats.Complete = s.stats.Requests, src.Malformed().N, ok
		}
		if !ok || !s.o.Loop || s.stats.Requests == 0 || ctx.Err() != nil {
			return
		}
		if s.stats.Passes == 1 {
			period = loopPeriod(lastOff, s.stats.Requests)
		}
		started, off = false, 0
		var err error
		if src, c, err = open(); err != nil {
			s.stats.Err = err
			return
		}
	}
}

// pass reads one pass of src through the reorder heap; false when the
// run ended or the read failed. The heap holds at most Window requests
// and half the read-ahead bytes (the other half for those sent out and
// not yet taken), so requests flow out as new ones come in.
func (s *Schedule) pass(ctx context.Context, src Source, h *reqHeap, emit func(reqlog.Request) bool) bool {
	var heapBytes int64
	out := func() bool {
		r := heap.Pop(h).(reqlog.Request)
		heapBytes -= reqBytes(&r)
		return emit(r)
	}
	for {
		r, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			s.stats.Err = err
			return false
		}
		// Room for r: send out what the heap holds past its half of the
		// read-ahead bytes, in time order; then, if those sent out and
		// not yet taken still leave no room, wait for VUs to take some.
		n := reqBytes(&r)
		for h.Len() > 0 && (heapBytes+n > s.o.ReadAhead/2 || !s.fits(n)) {
			if !out() {
				return false
			}
		}
		if !s.hold(ctx, n) {
			return false
		}
		heap.Push(h, r)
		heapBytes += n
		if h.Len() >= Window && !out() {
			return false
		}
	}
	for h.Len() > 0 {
		if !out() {
			return false
		}
	}
	return true
}

func (s *Schedule) mergeMalformed(m *reqlog.Malformed) {
	s.stats.malformed.N += m.N
	if s.stats.Passes > 1 {
		return // the same lines again
	}
	for _, e := range m.Examples {
		if len(s.stats.malformed.Examples) < reqlog.MaxExamples {
			s.stats.malformed.Examples = append(s.stats.malformed.Examples, e)
		}
	}
}

// reqHeap orders requests by time, then by file order (stable).
type reqHeap struct {
	r   []reqlog.Request
	seq []uint64
	n   uint64
}

func (h *reqHeap) Len() int { return len(h.r) }
func (h *reqHeap) Less(i, j int) bool {
	if h.r[i].At != h.r[j].At {
		return h.r[i].At < h.r[j].At
	}
	return h.seq[i] < h.seq[j]
}
func (h *reqHeap) Swap(i, j int) {
	h.r[i], h.r[j] = h.r[j], h.r[i]
	h.seq[i], h.seq[j] = h.seq[j], h.seq[i]
}
func (h *reqHeap) Push(x any) {
	h.r = append(h.r, x.(reqlog.Request))
	h.seq = append(h.seq, h.n)
	h.n++
}
func (h *reqHeap) Pop() any {
	n := len(h.r) - 1
	x := h.r[n]
	h.r[n] = reqlog.Request{}
	h.r, h.seq = h.r[:n], h.seq[:n]
	return x
}

// MinShare is the share of a recording a replay must send unless
// partial runs are allowed (--allow-partial): what was skipped (lines
// that do not parse, entries over the size bound) and what the run did
// not reach count against it.
const MinShare = 0.99

// Share is the part of the recording a run that sent sent covered: of
// the first pass's lines or entries, those sent (a looped run covers a
// pass once it sent as many requests). known is false when the run ended
// before the recording was read to its end (the share is then at most
// the one given).
func (st *Stats) Share(sent int64) (share float64, total int64, known bool) {
	total = st.PassRequests + st.PassSkipped
	if total == 0 {
		return 0, 0, st.Complete
	}
	return float64(min(sent, st.PassRequests)) / float64(total), total, st.Complete
}

// loopPeriod is a looped pass's length at speed 1: the span of its n
// requests (last is the last one's offset) and one mean gap more, so
// that a pass's last request and the next's first are as far apart as
// the average two (1 ms for a recording of one instant).
func loopPeriod(last time.Duration, n int64) time.Duration {
	p := last + last/time.Duration(max(n-1, 1))
	if p <= 0 {
		p = time.Millisecond
	}
	return p
}
