package h3

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

// The per-request timeout, kept by the Pool rather than by
// http.Client.Timeout: for a RoundTripper net/http does not know, that
// costs every request a goroutine, a timer besides the deadline
// context's, two channels and a sync.OnceFunc (net/http's
// setRequestCancel), about a tenth of the client's CPU per request
// against a bare quic-go loop. A VU sends one request at a time, so
// each VU's client keeps one context and one timer, re-armed per request;
// a request sent while another of the same client is under way gets a
// context of its own.

// ErrTimeout is a request that outlived the per-request timeout (the
// whole exchange, up to the end of its body). It is a net.Error whose
// Timeout() is true, as http.Client.Timeout's errors are.
var ErrTimeout error = timeoutError{}

type timeoutError struct{}

func (timeoutError) Error() string   { return "h3: request timeout exceeded" }
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

// timed is one VU's RoundTripper: its connection's slot, each request
// bounded by timeout.
type timed struct {
	rt      http.RoundTripper
	timeout time.Duration

	busy atomic.Bool // a request of the reused context is under way (its body not done)
	// Only the request holding busy touches these.
	parent context.Context // the context ctx derives from
	ctx    context.Context
	cancel context.CancelCauseFunc
	timer  *time.Timer // cancels ctx with ErrTimeout when it fires
	stale  bool        // timer fired (or is firing): ctx is not reused
}

func (t *timed) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.busy.CompareAndSwap(false, true) {
		return t.roundTripAlone(req)
	}
	ctx := t.arm(req.Context())
	resp, err := t.rt.RoundTrip(req.WithContext(ctx))
	if err != nil {
		err = t.cut(ctx, err)
		t.done()
		return nil, err
	}
	resp.Body = &timedBody{rc: resp.Body, ctx: ctx, d: t.timeout, t: t}
	return resp, nil
}

// arm returns the context of the next request, its timer started: the
// reused one unless the request's parent context changed or the last
// timer fired.
func (t *timed) arm(parent context.Context) context.Context {
	if t.ctx != nil && !t.stale && same(parent, t.parent) && t.ctx.Err() == nil {
		t.timer.Reset(t.timeout)
		return t.ctx
	}
	if t.timer != nil {
		t.timer.Stop()
		t.cancel(nil) // frees it from its parent; its request is over
	}
	ctx, cancel := context.WithCancelCause(parent)
	t.parent, t.ctx, t.cancel, t.stale = parent, ctx, cancel, false
	t.timer = time.AfterFunc(t.timeout, func() { cancel(ErrTimeout) })
	return ctx
}

// same is whether a and b are one context (false, not a panic, for a
// context type that is not comparable).
func same(a, b context.Context) bool {
	return reflect.TypeOf(a).Comparable() && a == b
}

// done ends the request that holds busy.
func (t *timed) done() {
	if !t.timer.Stop() {
		t.stale = true // its function runs, or ran: it cancels ctx
	}
	t.busy.Store(false)
}

// roundTripAlone is a request sent while another of the same client is
// under way: a context and timer of its own.
func (t *timed) roundTripAlone(req *http.Request) (*http.Response, error) {
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
func (t *timed) cut(ctx context.Context, err error) error {
	if errors.Is(context.Cause(ctx), ErrTimeout) {
		return &timedError{d: t.timeout, err: err}
	}
	return err
}

// CloseIdleConnections is http.Client's: the connection stays (Pool.Close
// ends it).
func (t *timed) CloseIdleConnections() {}

// timedBody is a response body under its request's timeout: the request
// is done at the body's first error (its end) or its Close.
type timedBody struct {
	rc    io.ReadCloser
	ctx   context.Context
	d     time.Duration
	t     *timed // its request holds t.busy (t.done ends it), or
	alone func() // ends a request with a context of its own
	over  atomic.Bool
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
		b.t.done()
	}
}
