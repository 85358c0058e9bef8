package load

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wirebench/wirebench/results"
)

// DeadTargetError ends a run's issuing early: no request has succeeded
// and every one failed for a reason that sending more cannot change
// (nothing listening, no TLS or QUIC handshake).
type DeadTargetError struct {
	Cause  string // the failure message, "connection refused"
	Failed int64
	After  time.Duration
}

func (e *DeadTargetError) Error() string {
	return fmt.Sprintf("stopped after %v: every one of the first %d requests failed (%s) and none succeeded; the run stops rather than keep sending to a target that does not answer",
		e.After.Round(time.Millisecond), e.Failed, e.Cause)
}

// When a dead target stops a run: after deadMany such failures and
// deadWait, or after deadLong whatever their number (a slow open-loop
// rate). A target still starting up gets that long to answer.
const (
	deadMany = 20
	deadWait = 200 * time.Millisecond
	deadLong = time.Second
)

// deadTarget watches a run's outcomes until the first success or the
// first failure of another kind; after that it costs each request one
// atomic load.
type deadTarget struct {
	start time.Time
	stop  func(error)
	off   atomic.Bool
	n     atomic.Int64
	once  sync.Once
}

// note looks at one outcome; nil-safe, safe for concurrent use.
func (w *deadTarget) note(o *Outcome) {
	if w == nil || w.off.Load() {
		return
	}
	if o.Fail == "" || !deadCause(o.Fail) {
		w.off.Store(true)
		return
	}
	n := w.n.Add(1)
	if n < deadMany && time.Since(w.start) < deadLong {
		return
	}
	if el := time.Since(w.start); el >= deadWait {
		w.once.Do(func() {
			if !w.off.Load() {
				w.stop(&DeadTargetError{Cause: o.Fail, Failed: n, After: el})
			}
		})
	}
}

// deadCause reports whether failures with message msg say the target is
// not there to answer, whatever the rate.
func deadCause(msg string) bool {
	switch results.CauseOf(msg) {
	case results.CauseRefused, results.CauseTLS, results.CauseHandshake:
		return true
	}
	return false
}
