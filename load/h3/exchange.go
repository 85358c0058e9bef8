package h3

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"reflect"
	"sync/atomic"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// exchange sends req on c and returns its response, as http3's
// ClientConn.RoundTrip does, on the stream API http3 offers beside it
// (OpenRequestStream). The difference is how a request is cut when its
// context ends (load's timeout, the run's end): ClientConn.RoundTrip
// starts a goroutine per request that waits on the context and on the
// request's end, with two channels; here a context.AfterFunc resets the
// stream (the same codes), registered once per context by a VU's client
// (v: a VU sends request after request under one context) or per request
// otherwise, and the stream is no longer reset once the body is done;
// nor is the connection's TLS state copied into every response (load
// reads none). That took the client's CPU per request from 1.08-1.10x
// bench/h3bare's bare loop to 0.93-1.02x (2-CPU Xeon VM, 2026-11-30,
// docs/http3.md).
//
// Requests with a body, CONNECT, and requests carrying an httptrace (the
// stream kinds time the first byte) go through ClientConn.RoundTrip.
func (c *conn) exchange(req *http.Request, v *vuConn) (*http.Response, error) {
	ctx := req.Context()
	if (req.Body != nil && req.Body != http.NoBody) || req.Method == http.MethodConnect || httptrace.ContextClientTrace(ctx) != nil {
		return c.cc.RoundTrip(req)
	}
	str, err := c.cc.OpenRequestStream(ctx)
	if err != nil {
		return nil, ctxErr(ctx, err)
	}
	done := v.watch(ctx, str)
	// As ClientConn.RoundTrip: a request whose header could not be sent
	// still reads what the server answered.
	if str.SendRequestHeader(req) == nil {
		str.Close()
	}
	var resp *http.Response
	for n1xx := 0; ; {
		resp, err = str.ReadResponse()
		if err != nil {
			done.finish()
			return nil, ctxErr(ctx, err)
		}
		if resp.StatusCode < 100 || resp.StatusCode > 199 || resp.StatusCode == http.StatusSwitchingProtocols {
			break
		}
		if n1xx++; n1xx > max1xx {
			cancelStream(str, http3.ErrCodeExcessiveLoad)
			done.finish()
			return nil, errTooMany1xx
		}
	}
	resp.Request = req
	done.rc = resp.Body
	resp.Body = done
	return resp, nil
}

// max1xx is ClientConn.RoundTrip's bound on informational responses.
const max1xx = 5

var errTooMany1xx = errors.New("http3: too many 1xx informational responses")

func cancelStream(str *http3.RequestStream, code http3.ErrCode) {
	str.CancelWrite(quic.StreamErrorCode(code))
	str.CancelRead(quic.StreamErrorCode(code))
}

// ctxErr is ClientConn.RoundTrip's error: the context's when it ended.
func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// vuConn is one VU's RoundTripper (Pool.Client): its slot's connection,
// and the context.AfterFunc that resets the stream of its request under
// way when that request's context ends, kept from one request to the
// next while they come under the same context, as a VU's do (one
// registration per context, not one per request).
type vuConn struct {
	s    *slot
	busy atomic.Bool // a request under w is under way (its body not done)
	w    *ctxWatch   // only the request holding busy touches it
}

func (v *vuConn) RoundTrip(req *http.Request) (*http.Response, error) {
	return v.s.roundTrip(req, v)
}

// CloseIdleConnections is the slot's (the connection stays).
func (v *vuConn) CloseIdleConnections() {}

// ctxWatch is one context's AfterFunc: it resets the stream in cur, the
// request under way under that context, if any. Each context has its
// own, so that a context ended after its last request (Timed retires its
// contexts) cannot reset the stream of a request under the next one.
type ctxWatch struct {
	ctx  context.Context
	cur  atomic.Pointer[http3.RequestStream]
	stop func() bool
}

func (w *ctxWatch) fire() {
	if str := w.cur.Load(); str != nil {
		cancelStream(str, http3.ErrCodeRequestCanceled)
	}
}

// watch arranges for str to be reset when ctx ends, until the returned
// body's finish: under v's watch of ctx if v is free (made if ctx is not
// the last request's), else under an AfterFunc of its own.
func (v *vuConn) watch(ctx context.Context, str *http3.RequestStream) *exchangeBody {
	if v == nil || !v.busy.CompareAndSwap(false, true) {
		stop := context.AfterFunc(ctx, func() { cancelStream(str, http3.ErrCodeRequestCanceled) })
		return &exchangeBody{stop: stop}
	}
	if v.w == nil || !sameCtx(v.w.ctx, ctx) {
		if v.w != nil {
			v.w.stop()
		}
		w := &ctxWatch{ctx: ctx}
		w.stop = context.AfterFunc(ctx, w.fire)
		v.w = w
	}
	w := v.w
	w.cur.Store(str)
	if ctx.Err() != nil { // ended before str was stored: fire may have missed it
		w.fire()
	}
	return &exchangeBody{v: v, w: w}
}

// sameCtx is a == b, false where they cannot be compared.
func sameCtx(a, b context.Context) bool {
	return reflect.TypeOf(a).Comparable() && reflect.TypeOf(a) == reflect.TypeOf(b) && a == b
}

// exchangeBody is a response body whose stream the request's context no
// longer resets once it is done (its first error, EOF included, or Close).
type exchangeBody struct {
	rc   io.ReadCloser
	stop func() bool // its own AfterFunc's; or
	v    *vuConn     // the VU's client whose watch w it holds
	w    *ctxWatch
	done atomic.Bool
}

func (b *exchangeBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil {
		b.finish()
	}
	return n, err
}

func (b *exchangeBody) Close() error {
	err := b.rc.Close()
	b.finish()
	return err
}

func (b *exchangeBody) finish() {
	if !b.done.CompareAndSwap(false, true) {
		return
	}
	if b.v == nil {
		b.stop()
		return
	}
	b.w.cur.Store(nil)
	b.v.busy.Store(false)
}
