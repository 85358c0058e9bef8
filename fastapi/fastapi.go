// Package fastapi serves the reference REST API on fasthttp: the same
// routes, formats, codings, limits and error table as the net/http engine,
// because both hand every request to httpapi.Server.Handle. Only the
// engine differs: fasthttp reuses its request contexts and buffers across
// requests, where net/http allocates a request, a header map and a
// response writer per request. HTTP/1.1 only (fasthttp has no h2c).
package fastapi

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
	"unsafe"

	"github.com/valyala/fasthttp"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/httpapi"
)

// Options are the engine's limits; zero fields are unlimited where
// fasthttp allows it, so callers pass the serve flags' values.
type Options struct {
	// MaxBody is the request body limit on the wire (httpapi also checks
	// the decoded size). Over it the reply is the API's 413.
	MaxBody int64
	// ReadHeader bounds reading a request's headers; Read bounds the
	// body after them (fasthttp has one read deadline, reset when the
	// headers are in).
	ReadHeader, Read time.Duration
	// Write bounds writing a response; Idle a keep-alive connection's
	// wait for its next request.
	Write, Idle time.Duration
	// MaxHeaderBytes is fasthttp's read buffer: headers that do not fit
	// are a 431.
	MaxHeaderBytes int
}

// NewServer returns a fasthttp server for h. Serve it on a listener and
// stop it with Shutdown.
func NewServer(h *httpapi.Server, o Options) *fasthttp.Server {
	a := &adapter{h: h}
	s := &fasthttp.Server{
		Handler:      a.serve,
		ErrorHandler: a.fail,
		// A declared body over the limit is a 413 before 100 Continue,
		// as on net/http.
		ExpectHandler: func(ctx *fasthttp.RequestCtx) int {
			if n := ctx.Request.Header.ContentLength(); o.MaxBody > 0 && int64(n) > o.MaxBody {
				a.failWith(ctx, fmt.Errorf("%w: Content-Length %d exceeds %d bytes", api.ErrTooLarge, n, o.MaxBody))
				return fasthttp.StatusRequestEntityTooLarge
			}
			return fasthttp.StatusContinue
		},
		ReadTimeout:  min(o.ReadHeader, o.Read),
		WriteTimeout: o.Write,
		IdleTimeout:  o.Idle,
		// Headers must fit the read buffer, so its size is the header
		// limit (fasthttp answers 431 past it, as net/http does).
		ReadBufferSize:     o.MaxHeaderBytes,
		MaxRequestBodySize: int(o.MaxBody),
		// The API reads no forms: a multipart body is an ordinary 415.
		DisablePreParseMultipartForm: true,
		NoDefaultServerHeader:        true,
		// The handler never reads RequestCtx.Time: a coarse clock saves a
		// clock read per request.
		LazyRequestTime:      true,
		NoDefaultContentType: true,
		CloseOnShutdown:      true,
		// Parse errors name their cause without quoting the request.
		SecureErrorLogMessage: true,
		// fasthttp logs connection errors (every hostile request) to
		// stderr by default; library code prints nothing.
		Logger: discard{},
	}
	if o.Read > o.ReadHeader {
		// After the headers, a body gets the whole read timeout. A
		// request without one keeps its deadline: resetting it costs a
		// clock read and a timer update per request for nothing.
		s.HeaderReceived = func(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
			// -2 is fasthttp's "identity": a request with neither
			// Content-Length nor chunked coding has no body (every
			// GET; treating it as a body re-armed the deadline with
			// a clock read per GET).
			if n := h.ContentLength(); n == 0 || n == -2 {
				return fasthttp.RequestConfig{}
			}
			return fasthttp.RequestConfig{ReadTimeout: o.Read}
		}
	}
	return s
}

type discard struct{}

func (discard) Printf(string, ...any) {}

type adapter struct{ h *httpapi.Server }

var (
	headerVary  = []byte("Vary")
	headerAllow = []byte("Allow")
	headerCE    = []byte("Content-Encoding")
	varyValue   = []byte(httpapi.VaryValue)
)

// request copies what the core needs out of ctx. Header values are copied
// into strings (cheap, and usually absent): fasthttp reuses its buffers
// after the handler returns, and the store may keep a path id. A GET's or
// HEAD's path is a view of fasthttp's buffer instead (httpapi.Request:
// nothing keeps it), one allocation less on the hot path (issue 54).
func request(ctx *fasthttp.RequestCtx, body []byte) httpapi.Request {
	h := &ctx.Request.Header
	m := method(h.Method())
	p := ctx.Path()
	path := ""
	if m == "GET" || m == "HEAD" {
		path = unsafe.String(unsafe.SliceData(p), len(p))
	} else {
		path = string(p)
	}
	r := httpapi.Request{
		Method:        m,
		Path:          path,
		ContentType:   string(h.ContentType()),
		ContentLength: int64(len(body)),
	}
	r.Accept, r.AcceptEncoding, r.ContentEncoding = acceptHeaders(h)
	if len(body) > 0 {
		r.Body = bytes.NewReader(body) // only requests with a body pay for it
	}
	return r
}

// acceptHeaders returns the first Accept, Accept-Encoding and Content-Encoding
// values, as Peek (and ContentEncoding) would. Peek canonicalizes its key
// on every call (about 310 instructions each, 3.8% of the process's per
// GET by cachegrind, issue 17), and ContentEncoding scans the headers once
// more (issue 54); the stored names are canonical already (fasthttp
// normalizes them as it parses), so one pass comparing them exactly finds
// the same values.
func acceptHeaders(h *fasthttp.RequestHeader) (accept, acceptEncoding, contentEncoding string) {
	var seenA, seenAE, seenCE bool
	for k, v := range h.All() {
		switch {
		case !seenA && string(k) == "Accept":
			accept, seenA = string(v), true
		case !seenAE && string(k) == "Accept-Encoding":
			acceptEncoding, seenAE = string(v), true
		case !seenCE && string(k) == "Content-Encoding":
			contentEncoding, seenCE = string(v), true
		}
	}
	return accept, acceptEncoding, contentEncoding
}

// method returns the constant for the common methods, so that they cost no
// allocation.
func method(m []byte) string {
	switch string(m) {
	case "GET":
		return "GET"
	case "HEAD":
		return "HEAD"
	case "POST":
		return "POST"
	case "PUT":
		return "PUT"
	case "DELETE":
		return "DELETE"
	}
	return string(m)
}

func (a *adapter) serve(ctx *fasthttp.RequestCtx) {
	if p := ctx.Request.Header.Protocol(); len(p) < 6 || p[5] != '1' {
		// fasthttp parses any HTTP/d.d; net/http speaks HTTP/1.x only.
		ctx.Error("unsupported protocol version", fasthttp.StatusHTTPVersionNotSupported)
		ctx.SetConnectionClose()
		return
	}
	req := request(ctx, ctx.PostBody())
	var resp httpapi.Response
	a.h.Handle(&req, &resp)
	write(ctx, &resp)
}

// write copies resp into fasthttp's response (which outlives the handler)
// and releases it.
func write(ctx *fasthttp.RequestCtx, resp *httpapi.Response) {
	ctx.SetStatusCode(resp.Status)
	h := &ctx.Response.Header
	if resp.Vary {
		h.SetCanonical(headerVary, varyValue)
	}
	if resp.Allow != "" {
		h.SetCanonical(headerAllow, []byte(resp.Allow))
	}
	if resp.RetryAfter != "" {
		h.Set("Retry-After", resp.RetryAfter)
	}
	if resp.Body != nil {
		h.SetContentType(resp.ContentType)
		if resp.ContentEncoding != "" {
			h.SetCanonical(headerCE, []byte(resp.ContentEncoding))
		}
		ctx.SetBody(resp.Body) // copies; a HEAD reply keeps the length and drops the body
	}
	resp.Release()
}

// fail answers what fasthttp refused before the handler: the body's
// failures are the API's {error, code} in the negotiated format (413, 408,
// 400 for ill-framed bodies); a header block over the read buffer is 431.
func (a *adapter) fail(ctx *fasthttp.RequestCtx, err error) {
	var small *fasthttp.ErrSmallBuffer
	var ne net.Error
	switch {
	case errors.As(err, &small):
		ctx.Error("request headers too large", fasthttp.StatusRequestHeaderFieldsTooLarge)
		return
	case errors.Is(err, fasthttp.ErrUnsupportedTransferEncoding):
		ctx.Error("unsupported transfer encoding", fasthttp.StatusNotImplemented)
		return
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		a.failWith(ctx, fmt.Errorf("%w: body exceeds the limit: %v", api.ErrTooLarge, err))
		lingerClose(ctx)
		return
	case errors.As(err, &ne) && ne.Timeout():
		err = fmt.Errorf("%w: request not received within the read timeout: %v", api.ErrTimeout, err)
	default:
		err = fmt.Errorf("%w: reading request: %v", api.ErrMalformed, err)
	}
	a.failWith(ctx, err)
}

func (a *adapter) failWith(ctx *fasthttp.RequestCtx, err error) {
	req := request(ctx, nil)
	var resp httpapi.Response
	a.h.Fail(&req, err, &resp)
	write(ctx, &resp)
}

// lingerDelay bounds how long a connection refused for its body's size is
// drained (net/http waits 500 ms the same way, rstAvoidanceDelay).
const lingerDelay = 500 * time.Millisecond

// lingerClose writes the reply in ctx now, half-closes the connection and
// discards what the client is still sending, for at most lingerDelay.
// fasthttp would close at once with the unread body in the kernel's
// buffer, which resets the connection: a client still writing its body
// (every ordinary client) then loses the 413 and sees a broken pipe.
// fasthttp's own write of the (reset) reply afterwards fails on the
// half-closed connection, which closes it.
func lingerClose(ctx *fasthttp.RequestCtx) {
	conn := ctx.Conn()
	cw, ok := conn.(interface{ CloseWrite() error })
	if !ok {
		return
	}
	ctx.Response.SetConnectionClose()
	bw := bufio.NewWriter(conn)
	if err := ctx.Response.Write(bw); err != nil || bw.Flush() != nil {
		return
	}
	ctx.Response.Reset()
	if cw.CloseWrite() != nil {
		return
	}
	_ = conn.SetReadDeadline(time.Now().Add(lingerDelay))
	_, _ = io.Copy(io.Discard, conn)
}
