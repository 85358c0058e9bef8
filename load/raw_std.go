package load

import (
	"context"
	"net/http"
	"slices"
	"sync/atomic"

	"github.com/wirebench/wirebench/load/clientio"
	"github.com/wirebench/wirebench/load/h1"
	"github.com/wirebench/wirebench/load/traceparent"
)

// rawStdVU sends the raw request through a net/http client (std, or
// HTTP/2 through an h2Pool).
type rawStdVU struct {
	r   *Raw
	c   *http.Client
	buf []byte
	hdr []string         // with Traceparent: the headers and a traceparent line, rewritten per request
	tp  *traceparent.Gen // nil without Traceparent
	req *h1.StdReq       // the request built once, when nothing in it changes (no body, no traceparent); else nil
}

func (r *Raw) stdVU(c *http.Client) *rawStdVU {
	v := &rawStdVU{r: r, c: c, hdr: r.o.Header}
	if r.o.Traceparent {
		v.hdr, v.tp = append(slices.Clone(r.o.Header), ""), traceparent.NewGen()
	}
	if len(r.o.Body) == 0 && !r.o.Traceparent {
		// Lower-case names over HTTP/3 (quic-go lowercases them per
		// request). A request NewStdReq refuses (a bad method) is built
		// per send, as before, and each send fails, counted.
		v.req, _ = h1.NewStdReq(r.o.Method, r.o.URL, r.o.Header, r.h3 != nil)
	}
	return v
}

func (v *rawStdVU) Do(ctx context.Context, o *Outcome) {
	// Only with a body (it escapes, one allocation), and not over HTTP/2,
	// whose DATA frames count the body (Raw.BodyBytesOut).
	var sent *atomic.Int64
	if len(v.r.o.Body) > 0 && v.r.h2 == nil {
		sent = new(atomic.Int64)
	}
	if v.tp != nil { // net/http copies the header anyway: a new string per request costs little more
		id, span := v.tp.Next()
		v.hdr[len(v.hdr)-1] = string(traceparent.Append([]byte(traceparent.Header+": "), id, span))
		o.Trace = id
	}
	var (
		status, n int
		body      []byte
		err       error
	)
	switch {
	case v.r.o.ExpectBodyContains == "": // counted, not kept
		if v.buf == nil {
			v.buf = make([]byte, 32<<10)
		}
		if v.req != nil {
			status, n, err = v.req.Count(ctx, v.c, v.buf)
		} else {
			status, n, err = h1.StdCount(ctx, v.c, v.r.o.Method, v.r.o.URL, v.hdr, v.r.o.Body, v.buf, sent)
		}
	case v.req != nil:
		status, body, err = v.req.Do(ctx, v.c, &v.buf)
		n = len(body)
	default:
		status, body, err = h1.StdDo(ctx, v.c, v.r.o.Method, v.r.o.URL, v.hdr, v.r.o.Body, &v.buf, nil, sent)
		n = len(body)
	}
	if sent != nil {
		o.BodyOut = int(sent.Load())
	}
	if err != nil {
		o.Fail = clientio.FailReason(err)
		return
	}
	o.Status, o.BodyIn = status, n
	v.r.check(o, body)
}

func (v *rawStdVU) Close() error { v.c.CloseIdleConnections(); return nil }
