package repl

import (
	"math/rand/v2"
	"time"
)

// backoff is the wait between failed attempts: it doubles from min to
// max at each failure and is reset by a stream that stayed up for
// StableAfter. Every failure kind waits — a refused connection, an HTTP
// error, a cut or bad snapshot, a sequence gap, a 409 asking for a
// resync — so that no leader, however broken, can make a follower loop
// on full resyncs (issue 34: ~4,900 in 11 s).
type backoff struct {
	min, max, cur time.Duration
	// jitter returns a value in [0, n] (math/rand/v2's N; tests fix it).
	jitter func(n time.Duration) time.Duration
}

// next returns the wait before the next attempt — "equal jitter", in
// [cur/2, cur], so that followers cut off together do not return
// together — and doubles cur up to max.
func (b *backoff) next() time.Duration {
	if b.cur < b.min {
		b.cur = b.min
	}
	j := b.jitter
	if j == nil {
		j = func(n time.Duration) time.Duration { return rand.N(n + 1) }
	}
	d := b.cur/2 + j(b.cur/2)
	b.cur = min(2*b.cur, b.max)
	return d
}

// reset starts the next failure's wait at min again.
func (b *backoff) reset() { b.cur = b.min }
