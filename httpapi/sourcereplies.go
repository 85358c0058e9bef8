package httpapi

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Source is one client source's (an address's) share of the reply
// budget, shared by its connections: the large replies of theirs that
// the client does not read. A connection's share (connReplies) bounds
// what one connection holds; a client that opens many connections with
// one never-read stream each escaped it, and the budget's whole worth of
// lists was encoded and held (60 HTTP/3 connections × one 12 MB list:
// ~43 lists, the server's RSS 720 MiB over a 512 MiB budget). Only
// replies not being read count: a benchmark reading its replies over
// many connections from one address holds as many as it reads, and never
// waits here. A reply is being read while its writes progress
// (replyChunk at a time, each one's end told by the adapter) at least
// once every unreadAfter, and its k-th chunk was taken within k
// unreadAfters of its encoding (512 KiB/s on average: a client that
// takes a chunk now and then, each time just before the first rule would
// count the reply, falls behind this one for good); past either its
// bytes count against the share, and the source's next large reply waits
// for one of them to be written or released.
//
// A reply the client drops before reading it (a reset stream, a closed
// connection, a write that timed out) still counts: its unread bytes,
// until a reader at that slowest pace would have finished it (a 12 MB
// list: ~23 s from its encoding). Released at once, a reset reply cost
// its source nothing it kept: a client that asked for lists and reset
// each stream once its headers were in had one encoded per request,
// back to back (~100 of 12 MB in 6 s), and another client's p99 went to
// 4-7× its quiet one; now its source's share bounds those encodings as it
// bounds the never-read ones.
type Source struct {
	mu      sync.Mutex
	replies []*sourceReply // the source's large replies held now
	total   int64          // their bytes
	changed chan struct{}  // closed and replaced when an unread reply goes or is read again
	// dropped are the replies dropped unread whose bytes still count,
	// droppedTotal their bytes; wake fires at the first one's end, to
	// wake the waiters (nil: none pending).
	dropped      []droppedReply
	droppedTotal int64
	wake         *time.Timer
	wakeAt       int64
}

// droppedReply is the part of a reply its client dropped unread: n
// bytes, counted until the monotonic time until.
type droppedReply struct{ n, until int64 }

// NewSource returns a source's share, for WithConnection: one for all of
// a client address's connections.
func NewSource() *Source { return &Source{changed: make(chan struct{})} }

// unreadAfter: a reply none of whose chunks was taken by the client for
// this long counts as not read. A reader on loopback takes a chunk in
// well under a millisecond, one among 60 connections sharing a busy
// server's CPU in tens; a never-read reply stops after the client's
// flow-control window (512 KiB for quic-go's client). Short, because the
// lists encoded meanwhile are all held: one 12 MB list's encoding took
// ~50 ms on the 2-CPU VM.
const unreadAfter = 250 * time.Millisecond

// replyChunk is the piece in which the adapter writes a reply with a
// source share (Response.wrote after each): a reply counts as read while
// the client takes at least this much per unreadAfter (512 KiB/s).
const replyChunk = 128 << 10

// sourceReply is one held reply of a source.
type sourceReply struct {
	src   *Source
	held  int64
	i     int          // index in src.replies
	start int64        // monotonic nanoseconds of its encoding
	last  atomic.Int64 // of its encoding or last chunk written
	taken atomic.Int64 // chunks written
}

// unreadAt reports whether r counts as not read at now: no chunk taken
// for unreadAfter, or fewer than one per unreadAfter since its encoding
// (the first one due unreadAfter after it).
func (r *sourceReply) unreadAt(now int64) bool {
	return now-r.last.Load() > int64(unreadAfter) || now-r.start > (r.taken.Load()+1)*int64(unreadAfter)
}

// clock is the monotonic time the replies' progress is kept in.
var clockStart = time.Now()

func clock() int64 { return int64(time.Since(clockStart)) }

// unread returns the bytes of the source's replies not read at now; s.mu
// is held.
// unread returns the bytes of the source's replies not read at now, the
// dropped ones still counted included; s.mu is held.
func (s *Source) unread(now int64) (n int64) {
	for _, r := range s.replies {
		if r.unreadAt(now) {
			n += r.held
		}
	}
	return n + s.droppedAt(now)
}

// droppedAt forgets the dropped replies that no longer count at now and
// returns the bytes of those that do; s.mu is held.
func (s *Source) droppedAt(now int64) int64 {
	kept := s.dropped[:0]
	for _, d := range s.dropped {
		if d.until > now {
			kept = append(kept, d)
		} else {
			s.droppedTotal -= d.n
		}
	}
	clear(s.dropped[len(kept):])
	s.dropped = kept
	return s.droppedTotal
}

// fitsLocked reports whether a reply of n bytes may be encoded now: the
// source's unread replies and it fit in share, or none is unread (a reply
// alone always fits).
func (s *Source) fitsLocked(n, share int64) bool {
	if s.total+s.droppedTotal+n <= share {
		return true // the unread ones are at most all
	}
	u := s.unread(clock())
	return u == 0 || u+n <= share
}

func (s *Source) fits(n, share int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fitsLocked(n, share)
}

// wait waits until a reply of the route whose last reply was last's (a
// route with no reply yet: the whole share) fits (fitsLocked), counted in
// waiting meanwhile. It reports whether it waited, and ctx's error if the
// client went first.
func (s *Source) wait(ctx context.Context, last *atomic.Int64, share int64, waiting *atomic.Int64) (waited bool, err error) {
	return waitUntil(ctx, &s.mu, &s.changed, waiting, func() bool { return s.fitsLocked(expected(last, share), share) })
}

// add records a reply of n bytes, just encoded.
func (s *Source) add(n int64) *sourceReply {
	r := &sourceReply{src: s, held: n, start: clock()}
	r.last.Store(r.start)
	s.mu.Lock()
	defer s.mu.Unlock()
	r.i = len(s.replies)
	s.replies = append(s.replies, r)
	s.total += n
	return r
}

// signalLocked wakes the waiters; s.mu is held.
func (s *Source) signalLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// remove forgets r, written or dropped; waiters re-check if it counted.
// A reply dropped before all its chunks were taken leaves its untaken
// bytes counted until a reader taking one chunk per unreadAfter since its
// encoding would have finished it (dropped, which remove reports).
func (s *Source) remove(r *sourceReply) (dropped bool) {
	now := clock()
	s.mu.Lock()
	defer s.mu.Unlock()
	last := len(s.replies) - 1
	s.replies[r.i] = s.replies[last]
	s.replies[r.i].i = r.i
	s.replies[last] = nil
	s.replies = s.replies[:last]
	s.total -= r.held
	chunks := (r.held + replyChunk - 1) / replyChunk
	taken := r.taken.Load()
	if until := r.start + chunks*int64(unreadAfter); taken < chunks && until > now {
		dropped = true
		s.dropped = append(s.dropped, droppedReply{n: r.held - taken*replyChunk, until: until})
		s.droppedTotal += r.held - taken*replyChunk
		if s.wake == nil || until < s.wakeAt {
			s.armLocked(until, now)
		}
	}
	if r.unreadAt(now) {
		s.signalLocked()
	}
	return dropped
}

// armLocked sets the wake-up at the dropped reply ending at until (now:
// the time); s.mu is held.
func (s *Source) armLocked(until, now int64) {
	if s.wake != nil {
		s.wake.Stop()
	}
	s.wakeAt = until
	// The timer references s: a source with dropped replies that count
	// is remembered (server's weak map) after its connections close.
	s.wake = time.AfterFunc(time.Duration(until-now), s.expire)
}

// expire wakes the waiters once a dropped reply no longer counts, and
// sets the next wake-up.
func (s *Source) expire() {
	now := clock()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wake = nil
	s.droppedAt(now)
	s.signalLocked()
	if len(s.dropped) > 0 {
		next := s.dropped[0].until
		for _, d := range s.dropped[1:] {
			next = min(next, d.until)
		}
		s.armLocked(max(next, now+1), now)
	}
}

// wrote tells that a chunk of r was taken by the client; if that makes
// an unread r read again, the waiters re-check.
func (r *sourceReply) wrote() {
	now := clock()
	was := r.unreadAt(now)
	r.taken.Add(1)
	r.last.Store(now)
	if was && !r.unreadAt(now) {
		r.src.mu.Lock()
		r.src.signalLocked()
		r.src.mu.Unlock()
	}
}
