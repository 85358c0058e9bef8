package h3

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
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
// stream (the same codes), stopped when the body is done; nor is the
// connection's TLS state copied into every response (load reads none).
// That took the client's CPU per request from 1.08-1.10x bench/h3bare's
// bare loop to 0.93-1.02x (2-CPU Xeon VM, 2026-11-30, docs/http3.md).
//
// Requests with a body, CONNECT, and requests carrying an httptrace (the
// stream kinds time the first byte) go through ClientConn.RoundTrip.
func (c *conn) exchange(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if (req.Body != nil && req.Body != http.NoBody) || req.Method == http.MethodConnect || httptrace.ContextClientTrace(ctx) != nil {
		return c.cc.RoundTrip(req)
	}
	str, err := c.cc.OpenRequestStream(ctx)
	if err != nil {
		return nil, ctxErr(ctx, err)
	}
	stop := context.AfterFunc(ctx, func() { cancelStream(str, http3.ErrCodeRequestCanceled) })
	// As ClientConn.RoundTrip: a request whose header could not be sent
	// still reads what the server answered.
	if str.SendRequestHeader(req) == nil {
		str.Close()
	}
	var resp *http.Response
	for n1xx := 0; ; {
		resp, err = str.ReadResponse()
		if err != nil {
			stop()
			return nil, ctxErr(ctx, err)
		}
		if resp.StatusCode < 100 || resp.StatusCode > 199 || resp.StatusCode == http.StatusSwitchingProtocols {
			break
		}
		if n1xx++; n1xx > max1xx {
			cancelStream(str, http3.ErrCodeExcessiveLoad)
			stop()
			return nil, errTooMany1xx
		}
	}
	resp.Request = req
	resp.Body = &exchangeBody{rc: resp.Body, stop: stop}
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

// exchangeBody is a response body whose stream the request's context no
// longer resets once it is done (its first error, EOF included, or Close).
type exchangeBody struct {
	rc   io.ReadCloser
	stop func() bool
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
	if b.done.CompareAndSwap(false, true) {
		b.stop()
	}
}
