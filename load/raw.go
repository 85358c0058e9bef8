package load

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wirebench/wirebench/load/clientio"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/h1"
	"github.com/wirebench/wirebench/load/h2"
	"github.com/wirebench/wirebench/load/h3"
	"github.com/wirebench/wirebench/load/replay/reqlog"
	"github.com/wirebench/wirebench/load/traceparent"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// RawOptions configure raw mode: one request, repeated, against any HTTP
// server (bombardier's model). The zero value (plus URL) is GET expecting
// a 2xx status over lean HTTP/1.1 keep-alive connections.
type RawOptions struct {
	// Options are where and how to connect (package conn): the URL,
	// http(s)://host[:port]/path, the transport and its connections, TLS.
	conn.Options
	Method string   `json:"method"`
	Header []string `json:"header,omitempty"` // "Key: Value" lines
	Body   []byte   `json:"-"`
	// ExpectStatus lists accepted statuses; empty accepts any 2xx.
	ExpectStatus []int `json:"expect_status,omitempty"`
	// ExpectBodyContains, if set, must occur in every response body.
	ExpectBodyContains string `json:"expect_body_contains,omitempty"`
	// Auto, set by NewRaw for Transport "auto", says which transport the
	// run took and why (the Alt-Svc it followed, or its absence).
	Auto string `json:"auto,omitempty"`
	// Traceparent sends a W3C traceparent header with a fresh random
	// trace ID (sampled) on every request, so that the requests the run
	// names (Load.Exemplars) can be found in the server's logs. Raw mode
	// then runs a goroutine per VU, not event loops, whose connections
	// share one serialized request.
	Traceparent bool `json:"traceparent,omitempty"`
	// ZeroRTT (h3 only, load --0rtt) resumes a session ticket got by one
	// full handshake before the run and sends each connection's first
	// GET or HEAD as 0-RTT early data (load/h3's zerortt.go).
	ZeroRTT bool `json:"zero_rtt,omitempty"`
}

// Raw is the raw-mode Scenario.
type Raw struct {
	o    RawOptions
	u    *url.URL
	c    *conn.Conns // the transport's TLS and pools
	wire []byte      // the whole pre-serialized HTTP/1.1 request
	tpAt int         // with Traceparent, where its value is in wire (each VU writes its own copy)
	want [600]bool
	h2   *h2.Pool // c's
	h3   *h3.Pool
}

// NewRaw validates o and pre-serializes the request.
func NewRaw(o RawOptions) (*Raw, error) {
	if o.Method == "" {
		o.Method = "GET"
	}
	if o.Client == "" {
		o.Client = conn.ClientLean
	}
	c, err := conn.New(o.Options, conn.Speaks{Transports: []string{conn.HTTP1, conn.H2C, conn.H2, conn.H3},
		Method: o.Method, Header: o.Header})
	if err != nil {
		return nil, err
	}
	o.Options, o.Auto = c.Options(), c.Auto
	r := &Raw{u: c.Target, c: c, h2: c.H2, h3: c.H3}
	r.o = o
	if len(o.ExpectStatus) == 0 {
		for s := 200; s < 300; s++ {
			r.want[s] = true
		}
	}
	for _, s := range o.ExpectStatus {
		if s < 100 || s > 599 {
			return nil, fmt.Errorf("%w: expected status %d", ErrOptions, s)
		}
		r.want[s] = true
	}
	for _, h := range o.Header {
		k, _, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("%w: header %q is not 'Key: Value'", ErrOptions, h)
		}
		if o.Traceparent && strings.EqualFold(strings.TrimSpace(k), traceparent.Header) {
			return nil, fmt.Errorf("%w: header %q and --traceparent: the run writes its own traceparent", ErrOptions, h)
		}
	}
	header := o.Header
	if o.Traceparent {
		header = append(slices.Clip(header), traceparent.Header+": "+traceparent.Placeholder)
	}
	r.wire = h1.AppendRequest(nil, o.Method, r.u.RequestURI(), r.u.Host, header, o.Body, !o.NoKeepAlive)
	if o.Traceparent {
		r.tpAt = bytes.Index(r.wire, []byte("\r\n"+traceparent.Header+": "+traceparent.Placeholder)) + len(traceparent.Header) + 4
	}
	return r, nil
}

// Options returns the options in effect, for the result's configuration.
func (r *Raw) Options() RawOptions { return r.o }

// Transport is the transport in effect and, with --transport auto, which
// it took and why.
func (r *Raw) Transport() (transport, auto string) { return r.o.Transport, r.o.Auto }

// Name names the scenario in results.
func (r *Raw) Name() string { return "raw" }

// Ops implements Scenario: raw mode has one operation.
func (r *Raw) Ops() []string {
	// Named as a recording would keep the path: a credential in it
	// (/reset/<token>) never reaches a result, a report or an exporter.
	path, _ := reqlog.RedactTarget(r.u.Path)
	return []string{r.o.Method + " " + path}
}

// NewVU implements Scenario.
func (r *Raw) NewVU(ctx context.Context, id int, wire *measure.Bytes) (VU, error) {
	switch {
	case r.h2 != nil:
		return r.stdVU(r.h2.Client(id)), nil
	case r.h3 != nil:
		if id == 0 { // the handshakes before the run, apart from latency
			if err := r.h3.Warm(ctx); err != nil {
				return nil, err
			}
		}
		return r.stdVU(r.h3.Client(id)), nil
	case r.o.Client == conn.ClientStd:
		return r.stdVU(h1.NewStdClient(wire, r.o.Timeout, r.o.NoKeepAlive, r.c.H1TLS())), nil
	}
	c := h1.NewConn(r.c.Addr, wire, r.o.Timeout, !r.o.NoKeepAlive)
	c.TLS = r.c.H1TLS()
	v := &rawVU{r: r, c: c, wire: r.wire}
	if r.o.Traceparent {
		v.wire, v.tp = slices.Clone(r.wire), traceparent.NewGen()
	}
	return v, nil
}

// Driver implements Scenario: raw mode over lean HTTP/1.1 may run on
// event loops (h1loop.go).
func (r *Raw) Driver() Driver {
	if r.loopable() {
		return EventLoops
	}
	return PerVU
}

// Finish implements Scenario: over HTTP/2, the shared connections' bytes,
// the body bytes their DATA frames carried and the requests resent.
func (r *Raw) Finish(res *results.Load) {
	res.Conn = ConnResult(r.o.URL, r.o.Transport, r.o.Auto, r.H3Handshakes(), r.H3ZeroRTT())
	if r.h3 != nil {
		r.h3.Close() // every VU closed: CONNECTION_CLOSE goes out, counted
		in, out := r.h3.Bytes.In.Load(), r.h3.Bytes.Out.Load()
		res.Bytes.WireIn += in
		res.Bytes.WireOut += out
		r.h3.Finish(res) // bytes by layer inside QUIC
	}
	in, out := r.WireBytes()
	res.Bytes.WireIn += in
	res.Bytes.WireOut += out
	res.Bytes.BodyOut += r.BodyBytesOut()
	h2.ResentWarning(res, r.Resent())
}

// H3Handshakes is how long each QUIC handshake of an HTTP/3 run took
// (none for other transports): apart from the requests' latency, which
// starts after it.
func (r *Raw) H3Handshakes() []time.Duration {
	if r.h3 == nil {
		return nil
	}
	return r.h3.Handshakes()
}

// H3ZeroRTT is the 0-RTT counts of an h3 --0rtt run (nil otherwise).
func (r *Raw) H3ZeroRTT() *h3.ZeroRTTStats {
	if r.h3 == nil {
		return nil
	}
	return r.h3.ZeroRTT()
}

// WireBytes is the bytes of h2c's shared connections.
func (r *Raw) WireBytes() (in, out int64) {
	if r.h2 == nil {
		return 0, 0
	}
	return r.h2.Bytes.In.Load(), r.h2.Bytes.Out.Load()
}

// BodyBytesOut is, over HTTP/2,, the body bytes the
// DATA frames carried.
func (r *Raw) BodyBytesOut() int64 {
	if r.h2 == nil {
		return 0
	}
	return r.h2.BodyOut()
}

// Resent is the HTTP/2 requests resent (h2Pool.Resent).
func (r *Raw) Resent() int64 {
	if r.h2 == nil {
		return 0
	}
	return r.h2.Resent()
}

// check validates o.Status and the body, setting o.Fail when they are not
// what the options expect.
func (r *Raw) check(o *Outcome, body []byte) {
	if status := o.Status; status < 0 || status >= len(r.want) || !r.want[status] {
		o.Fail = "status " + strconv.Itoa(status)
		return
	}
	if r.o.ExpectBodyContains != "" && !bytes.Contains(body, []byte(r.o.ExpectBodyContains)) {
		o.Fail = "body check: no " + strconv.Quote(r.o.ExpectBodyContains)
	}
}

// bodySent is how much of the body went out when wrote bytes of the
// request did: all of it, unless the server answered before the body's
// end and hung up.
func (r *Raw) bodySent(wrote int) int {
	return min(len(r.o.Body), max(0, wrote-(len(r.wire)-len(r.o.Body))))
}

type rawVU struct {
	r    *Raw
	c    *h1.Conn
	wire []byte           // the request: the Raw's, or with Traceparent this VU's copy
	tp   *traceparent.Gen // nil without Traceparent
}

func (v *rawVU) Do(ctx context.Context, o *Outcome) {
	discard := v.r.o.ExpectBodyContains == ""
	if v.tp != nil { // a fresh trace ID, written in place
		id, span := v.tp.Next()
		traceparent.Put(v.wire[v.r.tpAt:], id, span)
		o.Trace = id
	}
	resp, err := v.c.RoundTrip(ctx, v.wire, v.r.o.Method == "HEAD", discard)
	o.Conn = v.c.LocalPort
	o.BodyOut = v.r.bodySent(v.c.Sent)
	if err != nil {
		o.Fail = clientio.FailReason(err)
		return
	}
	o.Status = resp.Status
	o.BodyIn = resp.BodyLen
	v.r.check(o, resp.Body)
}

func (v *rawVU) Close() error { v.c.Close(); return nil }
