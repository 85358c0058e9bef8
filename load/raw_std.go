package load

import (
	"context"
	"net/http"
	"sync/atomic"

	"github.com/wirebench/wirebench/load/clientio"
	"github.com/wirebench/wirebench/load/h1"
)

// rawStdVU sends the raw request through a net/http client (std, or
// HTTP/2 through an h2Pool).
type rawStdVU struct {
	r   *Raw
	c   *http.Client
	buf []byte
}

func (v *rawStdVU) Do(ctx context.Context, o *Outcome) {
	// Only with a body (it escapes, one allocation), and not over HTTP/2,
	// whose DATA frames count the body (Raw.BodyBytesOut).
	var sent *atomic.Int64
	if len(v.r.o.Body) > 0 && v.r.h2 == nil {
		sent = new(atomic.Int64)
	}
	status, body, err := h1.StdDo(ctx, v.c, v.r.o.Method, v.r.o.URL, v.r.o.Header, v.r.o.Body, &v.buf, nil, sent)
	if sent != nil {
		o.BodyOut = int(sent.Load())
	}
	if err != nil {
		o.Fail = clientio.FailReason(err)
		return
	}
	o.Status, o.BodyIn = status, len(body)
	v.r.check(o, body)
}

func (v *rawStdVU) Close() error { v.c.CloseIdleConnections(); return nil }
