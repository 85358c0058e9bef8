package clientio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"sync/atomic"
	"time"
)

// The per-request timeout, kept by a RoundTripper (Timed) rather than by
// http.Client.Timeout: for a RoundTripper net/http does not know, that
// costs every request a goroutine, a timer besides the deadline
// context's, two channels and a sync.OnceFunc (net/http's
// setRequestCancel), about a tenth of the client's CPU per request
// against a bare quic-go loop (load/h3), and a send through the Client
// at all (the header map it copies per request for redirects, which load
// does not follow: SendStd). A VU sends one request at a time, so
// each VU's client keeps one context and one timer for all its requests
// (a watch): a request only sets its deadline, a clock read and an
// atomic store, and the timer, set for the timeout when the VU starts
// sending, fires once per timeout while requests keep coming and sets
// itself again for the remaining time of the one under way (re-arming a
// timer per request cost ~3% of the client's CPU against the bare loop).
// A request sent while another of the same client is under way gets a
// context and timer of its own.

// ErrTimeout is a request that outlived the per-request timeout (the
// whole exchange, up to the end of its body). It is a net.Error whose
// Timeout() is true, as http.Client.Timeout's errors are.
var ErrTimeout error = timeoutError{}

type timeoutError struct{}

func (timeoutError) Error() string   { return "request timeout exceeded" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// timedError is a request's error once its timeout expired: the timeout,
// with what the request saw when it was cut.
type timedError struct {
	d   time.Duration
	err error
}

func (e *timedError) Error() string {
	return fmt.Sprintf("%v (%v): %v", ErrTimeout, e.d, e.err)
}
func (e *timedError) Unwrap() []error { return []error{ErrTimeout, e.err} }
func (e *timedError) Timeout() bool   { return true }
func (e *timedError) Temporary() bool { return true }

// Timed is one VU's RoundTripper: its connection's (rt), each request
// bounded by timeout, up to the end of its body (a timeout fails as
// ErrTimeout). A VU keeps it and sends one request at a time: that is the
// cheap case; requests sent at once are each bounded too.
type Timed struct {
	rt      http.RoundTripper
	timeout time.Duration

	busy atomic.Bool // a request of the reused context is under way (its body not done)
	// Only the request holding busy touches these.
	parent    context.Context // the context w's derives from
	parentCmp bool            // parent's type is comparable (a request's context may not be)
	w         *watch          // the reused context; nil before the first request
	stale     bool            // w's timer cancelled its context: w is not reused
}

// NewTimed bounds each request sent through rt by timeout.
func NewTimed(rt http.RoundTripper, timeout time.Duration) *Timed {
	return &Timed{rt: rt, timeout: timeout}
}

// watch is a context reused by one request after another and the timer
// that cancels it when the request under way outlives its deadline.
type watch struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	base   time.Time // deadlines are monotonic nanoseconds since base
	timer  *time.Timer
	// deadline is the request under way's: 0 when none is, -1 once the
	// timer cancelled ctx for one.
	deadline atomic.Int64
	// armed: the timer is set or its function runs; only its holder (the
	// request that set it from false, or fire) sets the timer.
	armed atomic.Bool
}

func newWatch(parent context.Context) *watch {
	w := &watch{base: time.Now()}
	w.ctx, w.cancel = context.WithCancelCause(parent)
	w.timer = time.AfterFunc(time.Hour, w.fire)
	w.timer.Stop()
	return w
}

// start sets the deadline of a request sent now and returns it; the
// timer is set if it is not.
func (w *watch) start(timeout time.Duration) int64 {
	d := int64(time.Since(w.base) + timeout)
	w.deadline.Store(d)
	if !w.armed.Load() && w.armed.CompareAndSwap(false, true) {
		w.timer.Reset(timeout)
	}
	return d
}

// end ends the request of deadline d: false if the timer cancelled the
// context for it (or is cancelling it).
func (w *watch) end(d int64) bool { return w.deadline.CompareAndSwap(d, 0) }

// fire is the timer's function: it cancels the context if the request
// under way is past its deadline, sets the timer again for the rest of
// it if not, and leaves the timer off while no request is under way.
func (w *watch) fire() {
	for {
		d := w.deadline.Load()
		now := int64(time.Since(w.base))
		switch {
		case d > 0 && now >= d:
			if w.deadline.CompareAndSwap(d, -1) {
				w.cancel(ErrTimeout) // armed stays set: the watch is done
				return
			}
			// the request ended, or another began: look again
		case d > 0:
			w.timer.Reset(time.Duration(d - now))
			return
		default: // none under way
			w.armed.Store(false)
			// A request that began since the load above left the timer
			// to fire if it saw armed set: take it back for that request.
			if w.deadline.Load() == 0 || !w.armed.CompareAndSwap(false, true) {
				return
			}
		}
	}
}

// retire frees w's context from its parent and stops its timer; no
// request of it is under way.
func (w *watch) retire() {
	w.timer.Stop()
	w.cancel(nil)
}

// RequestContext is the context a request sent next on t gets, derived
// from parent: a request built under it is sent as it is, rather than
// copied under its own (h1.StdReq builds its request once per VU). For a
// client one goroutine sends on, as a VU does; with another request under
// way it is parent (the request then gets a context of its own).
func (t *Timed) RequestContext(parent context.Context) context.Context {
	if !t.busy.CompareAndSwap(false, true) {
		return parent
	}
	defer t.busy.Store(false)
	return t.prepare(parent).ctx
}

func (t *Timed) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.busy.CompareAndSwap(false, true) {
		return t.roundTripAlone(req)
	}
	parent := req.Context()
	own := t.w != nil && parent == t.w.ctx // built under RequestContext's
	if own {
		parent = t.parent
	}
	w := t.prepare(parent)
	if !own || w.ctx != req.Context() {
		req = req.WithContext(w.ctx)
	}
	d := w.start(t.timeout)
	resp, err := t.rt.RoundTrip(req)
	if err != nil {
		err = t.cut(w.ctx, err)
		t.done(w, d)
		return nil, err
	}
	resp.Body = &timedBody{rc: resp.Body, ctx: w.ctx, d: t.timeout, t: t, w: w, deadline: d}
	return resp, nil
}

// prepare returns the watch of the next request under parent: the last
// one unless parent changed or its timer cancelled it.
func (t *Timed) prepare(parent context.Context) *watch {
	if t.w != nil && !t.stale && t.parentCmp && parent == t.parent {
		return t.w
	}
	if t.w != nil {
		t.w.retire()
	}
	t.parent, t.parentCmp = parent, reflect.TypeOf(parent).Comparable()
	t.w, t.stale = newWatch(parent), false
	return t.w
}

// done ends the request of deadline d that holds busy.
func (t *Timed) done(w *watch, d int64) {
	if !w.end(d) {
		t.stale = true // its timer cancels, or cancelled, ctx
	}
	t.busy.Store(false)
}

// roundTripAlone is a request sent while another of the same client is
// under way: a context and timer of its own.
func (t *Timed) roundTripAlone(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	timer := time.AfterFunc(t.timeout, func() { cancel(ErrTimeout) })
	resp, err := t.rt.RoundTrip(req.WithContext(ctx))
	end := func() { timer.Stop(); cancel(nil) }
	if err != nil {
		err = t.cut(ctx, err)
		end()
		return nil, err
	}
	resp.Body = &timedBody{rc: resp.Body, ctx: ctx, d: t.timeout, alone: end}
	return resp, nil
}

// cut names an error of a request whose timeout expired as a timeout.
func (t *Timed) cut(ctx context.Context, err error) error {
	if errors.Is(context.Cause(ctx), ErrTimeout) {
		return &timedError{d: t.timeout, err: err}
	}
	return err
}

// CloseIdleConnections is http.Client's, passed on to the RoundTripper
// under t (load/h3's keeps its connection, load/h2's closes idle ones).
func (t *Timed) CloseIdleConnections() {
	if c, ok := t.rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// timedBody is a response body under its request's timeout: the request
// is done at the body's first error (its end) or its Close.
type timedBody struct {
	rc       io.ReadCloser
	ctx      context.Context
	d        time.Duration
	t        *Timed // its request holds t.busy (t.done ends it), or
	alone    func() // ends a request with a context of its own
	w        *watch // with t: the request's watch and deadline
	deadline int64
	over     atomic.Bool
}

func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil {
		if err != io.EOF && !b.over.Load() && errors.Is(context.Cause(b.ctx), ErrTimeout) {
			err = &timedError{d: b.d, err: err}
		}
		b.finish()
	}
	return n, err
}

func (b *timedBody) Close() error {
	err := b.rc.Close()
	b.finish()
	return err
}

func (b *timedBody) finish() {
	if !b.over.CompareAndSwap(false, true) {
		return
	}
	if b.alone != nil {
		b.alone()
	} else {
		b.t.done(b.w, b.deadline)
	}
}
