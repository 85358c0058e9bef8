package h1

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"time"

	"github.com/wirebench/wirebench/load/clientio"
	"github.com/wirebench/wirebench/measure"
)

// NewStdClient is one VU's net/http client: its own Transport with one
// connection, so its bytes count into the VU's worker like h1.Conn's do.
// It exists to measure net/http against h1.Conn (bench/), not as the default.
func NewStdClient(wire *measure.Bytes, timeout time.Duration, noKeepAlive bool, tlsCfg *tls.Config) *http.Client {
	d := &net.Dialer{Timeout: timeout}
	var protos http.Protocols
	protos.SetHTTP1(true) // HTTP/1.1 also over TLS: h2 is --transport h2
	return &http.Client{
		Timeout:       timeout,
		CheckRedirect: clientio.NoRedirect, // a redirect is counted, as h1.Conn counts it
		Transport: &http.Transport{
			// TLS runs over the counting connection: TLS records count as framing.
			DialContext:         measure.CountingDialer(d.DialContext, wire),
			TLSClientConfig:     tlsCfg,
			Protocols:           &protos,
			MaxIdleConnsPerHost: 1,
			MaxConnsPerHost:     1,
			DisableKeepAlives:   noKeepAlive,
			DisableCompression:  true,
			// as the lean client: a server's head is refused past maxHead
			MaxResponseHeaderBytes: clientio.MaxHead,
		},
	}
}

// countedBody counts the bytes read from r into n. It hides r's WriteTo,
// so that every byte goes through Read.
type countedBody struct {
	r *bytes.Reader
	n *atomic.Int64
}

func (b *countedBody) Read(p []byte) (int, error) {
	k, err := b.r.Read(p)
	b.n.Add(int64(k))
	return k, err
}

// StdDo sends one request with net/http's client, reading the response's
// body into buf (reused); the body is valid until the next call. If ce is
// not nil it receives the response's Content-Encoding (the body is left
// coded); if sent is not nil, it counts the request body's bytes the
// transport took (all of them, unless the server answered before their
// end and the transport stopped).
func StdDo(ctx context.Context, c *http.Client, method, url string, header []string, body []byte, buf *[]byte, ce *string, sent *atomic.Int64) (int, []byte, error) {
	resp, err := stdSend(ctx, c, method, url, header, body, sent)
	if err != nil {
		return 0, nil, err
	}
	return stdRead(resp, buf, ce)
}

// stdRead reads resp's body into buf, as StdDo.
func stdRead(resp *http.Response, buf *[]byte, ce *string) (int, []byte, error) {
	defer resp.Body.Close()
	if ce != nil {
		*ce = resp.Header.Get("Content-Encoding")
	}
	if resp.ContentLength > clientio.MaxBody {
		return resp.StatusCode, nil, fmt.Errorf("%w: body of %d bytes", clientio.ErrTooLarge, resp.ContentLength)
	}
	// An endless or huge body fails with ErrTooLarge instead of growing
	// the client without bound.
	var err error
	*buf, err = ReadLimited(*buf, resp.Body, clientio.MaxBody)
	if err != nil {
		return resp.StatusCode, nil, bodyErr(err)
	}
	return resp.StatusCode, *buf, nil
}

// StdCount is StdDo for a body nobody reads: it is counted, not kept
// (the same limit), so a run whose checks need no body holds one small
// buffer per VU instead of up to clientio.MaxBody (an endless body over
// h2c peaked at 200-300 MiB of heap when every VU kept what it counted).
func StdCount(ctx context.Context, c *http.Client, method, url string, header []string, body []byte, scratch []byte, sent *atomic.Int64) (int, int, error) {
	resp, err := stdSend(ctx, c, method, url, header, body, sent)
	if err != nil {
		return 0, 0, err
	}
	return stdCount(resp, scratch)
}

// stdCount reads resp's body to its end, as StdCount.
func stdCount(resp *http.Response, scratch []byte) (int, int, error) {
	defer resp.Body.Close()
	if resp.ContentLength > clientio.MaxBody {
		return resp.StatusCode, 0, fmt.Errorf("%w: body of %d bytes", clientio.ErrTooLarge, resp.ContentLength)
	}
	n := 0
	for {
		k, err := resp.Body.Read(scratch)
		n += k
		if n > clientio.MaxBody {
			return resp.StatusCode, 0, fmt.Errorf("%w: body over %d bytes", clientio.ErrTooLarge, clientio.MaxBody)
		}
		switch {
		case err == io.EOF:
			return resp.StatusCode, n, nil
		case err != nil:
			return resp.StatusCode, 0, bodyErr(err)
		}
	}
}

// StdReq is a request without a body that one VU sends again and again
// through net/http's client: its URL parsed and its header built once,
// not per request (the header alone was 4% of the h3 client's CPU per
// request). net/http's RoundTrippers must not change a request, and may
// be given it again once the response's body is closed, which StdDo and
// StdCount do before they return. A request with a body is built per
// send: a transport may still read it after the response.
type StdReq struct {
	req    *http.Request
	ctx    context.Context // req's context
	ctxCmp bool            // ctx's type is comparable
}

// NewStdReq builds the request. With lower, header names are in lower
// case, as HTTP/2 and HTTP/3 send them: quic-go lowercases each name it
// sends, a string per header per request unless it is lower already
// (net/http's HTTP/1 transport wants User-Agent canonical: not for it).
func NewStdReq(method, url string, header []string, lower bool) (*StdReq, error) {
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		return nil, err
	}
	add := func(k, v string) {
		if lower {
			k = strings.ToLower(k)
			req.Header[k] = append(req.Header[k], v)
			return
		}
		req.Header.Add(k, v)
	}
	for _, h := range header {
		k, val, _ := CutHeader(h)
		if !Replaced(k) {
			add(k, val)
		}
	}
	setDefaults(req, header, lower)
	return &StdReq{req: req}, nil
}

// with returns the request under ctx, or under the context c's transport
// gives a request sent now (requestContexter); it keeps the last one, so a
// VU whose context stays the same (a run's) gets the same request each
// time.
func (r *StdReq) with(ctx context.Context, c *http.Client) *http.Request {
	if rc, ok := c.Transport.(requestContexter); ok {
		ctx = rc.RequestContext(ctx)
	}
	if !r.ctxCmp || ctx != r.ctx {
		r.req = r.req.WithContext(ctx)
		r.ctx, r.ctxCmp = ctx, reflect.TypeOf(ctx).Comparable()
	}
	return r.req
}

// requestContexter is a RoundTripper that sends each request under a
// context of its own, derived from the request's (load/h3's per-request
// timeout): RequestContext returns the one a request sent now gets, and a
// request built under it is sent as it is, rather than copied.
type requestContexter interface {
	RequestContext(parent context.Context) context.Context
}

// Count is StdCount of r.
func (r *StdReq) Count(ctx context.Context, c *http.Client, scratch []byte) (int, int, error) {
	resp, err := clientio.Send(c, r.with(ctx, c))
	if err != nil {
		return 0, 0, err
	}
	return stdCount(resp, scratch)
}

// Do is StdDo of r.
func (r *StdReq) Do(ctx context.Context, c *http.Client, buf *[]byte) (int, []byte, error) {
	resp, err := clientio.Send(c, r.with(ctx, c))
	if err != nil {
		return 0, nil, err
	}
	return stdRead(resp, buf, nil)
}

// bodyErr names a body cut short as the connection closing during it.
func bodyErr(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return clientio.ErrClosedDuring
	}
	return err
}

// stdSend sends the request and returns the response, its body unread.
func stdSend(ctx context.Context, c *http.Client, method, url string, header []string, body []byte, sent *atomic.Int64) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, err
	}
	if sent != nil && len(body) > 0 {
		// As NewRequest does for a bytes.Reader, with the reads counted
		// (atomic: the transport may read on after the response).
		req.GetBody = func() (io.ReadCloser, error) {
			return io.NopCloser(&countedBody{r: bytes.NewReader(body), n: sent}), nil
		}
		req.Body, _ = req.GetBody()
	}
	for _, h := range header {
		k, val, _ := CutHeader(h)
		if !Replaced(k) {
			req.Header.Add(k, val)
		}
	}
	setDefaults(req, header, false)
	return clientio.Send(c, req)
}

// setDefaults gives req the Host and User-Agent of Defaults: net/http
// sends req.Host (HTTP/1.1's Host, HTTP/2's and HTTP/3's :authority), and
// a User-Agent entry of "" sends none, where no entry would send Go's or
// quic-go's own. With lower, the entry's name is in lower case (NewStdReq).
func setDefaults(req *http.Request, header []string, lower bool) {
	host, ua := Defaults(req.Host, header)
	req.Host = host
	if lower {
		req.Header["user-agent"] = []string{ua}
	} else {
		req.Header["User-Agent"] = []string{ua}
	}
}

// ReadLimited reads r to its end into b[:0] and returns it; more than
// limit bytes fail with ErrTooLarge. b grows by doubling, but never past
// limit+1 bytes: bytes.Buffer.ReadFrom doubles a full 64 MiB buffer to
// 128 MiB to read the one byte that proves a body too large (the std
// client peaked at 264-385 MiB against an endless body; the abuse test's
// bound is 400).
func ReadLimited(b []byte, r io.Reader, limit int) ([]byte, error) {
	b = b[:0]
	for {
		if len(b) == cap(b) {
			if len(b) > limit {
				return nil, fmt.Errorf("%w: body over %d bytes", clientio.ErrTooLarge, limit)
			}
			// make, not append: append's growth may round past the limit.
			nb := make([]byte, len(b), len(b)+min(max(cap(b), 4<<10), limit+1-len(b)))
			b = nb[:copy(nb, b)]
		}
		k, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+k]
		switch {
		case err == io.EOF && len(b) > limit:
			return nil, fmt.Errorf("%w: body over %d bytes", clientio.ErrTooLarge, limit)
		case err == io.EOF:
			return b, nil
		case err != nil:
			return nil, err
		}
	}
}
