package httpapi

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/codec"
	"github.com/wirebench/wirebench/promtext"
)

// Request is an HTTP request as the engine-neutral core sees it: what an
// engine adapter (net/http here, fasthttp in package fastapi) copies out of
// its own request type. Strings must stay valid after Handle returns (the
// store may keep a path id), but for a GET's or HEAD's Path: those store
// nothing, so the core keeps nothing of their path (an engine may pass a
// view of its own buffer, valid until Handle returns).
type Request struct {
	Method, Path string
	// Header values, "" when absent.
	ContentType, Accept, ContentEncoding, AcceptEncoding string
	// ContentLength is the declared body length, -1 when unknown
	// (chunked); a declared length over the body limit is refused before
	// Body is read.
	ContentLength int64
	// Body is read only by routes that take one; nil is an empty body.
	// A read that fails with os.ErrDeadlineExceeded is a 408.
	Body io.Reader
	// Context, if set, ends when the client has gone (its connection or
	// stream closed): a request that waited for an encoding slot is then
	// answered without its snapshot and encoding. nil: never known gone.
	Context context.Context
}

// Response is the core's answer, for the adapter to write: the status, the
// headers that are set (empty strings are absent), and the body.
type Response struct {
	Status                              int
	ContentType, ContentEncoding, Allow string
	// RetryAfter is set on a 503 shed by the reply budget.
	RetryAfter string
	// Vary is set on API routes, whose reply depends on Accept and
	// Accept-Encoding: the adapter sends "Vary: Accept, Accept-Encoding".
	Vary bool
	// Body is valid until Release.
	Body   []byte
	buf    *bytes.Buffer
	held   int          // bytes of the reply budget held until Release
	budget *replyBudget // nil when none is held
	// connHeld bytes of the connection's share held until Release.
	conn     *connReplies
	connHeld int64
	// src is the reply as its source's share counts it (nil: none): the
	// adapter writes Body in replyChunk pieces, telling each (wrote).
	src *sourceReply
}

const (
	replyHeldName   = "wirebench_http_reply_bytes_held"
	replyBudgetName = "wirebench_http_reply_budget_bytes"
	replyShedName   = "wirebench_http_replies_shed_total"
	connWaitingName = "wirebench_http_replies_waiting_connection"
	connWaitedName  = "wirebench_http_replies_waited_connection_total"
	srcWaitingName  = "wirebench_http_replies_waiting_source"
	srcWaitedName   = "wirebench_http_replies_waited_source_total"
	droppedName     = "wirebench_http_replies_dropped_unread_total"
)

// VaryValue is the Vary header of API replies.
const VaryValue = "Accept, Accept-Encoding"

// Release returns the response's buffers; Body is invalid afterwards.
func (r *Response) Release() {
	if r.budget != nil {
		r.budget.release(r.held)
	}
	if r.conn != nil {
		r.conn.release(r.connHeld)
	}
	if r.src != nil && r.src.src.remove(r.src) && r.budget != nil {
		r.budget.droppedUnread.Add(1)
	}
	if r.buf != nil {
		putBuffer(r.buf)
	}
	*r = Response{}
}

// marshal encodes v with c: into buf when c can encode into a buffer
// (encoding/json then skips copying its reply into a new slice, one
// allocation per reply), else with c.Marshal. m is c as a BufferMarshaler
// when the caller knows it (nil: asserted here). The bytes are valid until
// Release.
func (r *Response) marshal(c codec.Codec, m codec.BufferMarshaler, v any) ([]byte, error) {
	if m == nil {
		var ok bool
		if m, ok = c.(codec.BufferMarshaler); !ok {
			return c.Marshal(v)
		}
	}
	if r.buf == nil {
		r.buf = getBuffer()
	}
	r.buf.Reset()
	if err := m.MarshalTo(r.buf, v); err != nil {
		return nil, err
	}
	return r.buf.Bytes(), nil
}

// encode applies the content coding the client prefers to Body, into a
// buffer of its own (Body may be in buf), which then becomes buf.
func (r *Response) encode(acceptEncoding string) {
	coding := chooseCoding(acceptEncoding)
	if coding == codingIdentity {
		return
	}
	dst := getBuffer()
	if err := compress(dst, r.Body, coding); err != nil {
		putBuffer(dst)
		return
	}
	if r.buf != nil {
		putBuffer(r.buf)
	}
	r.buf, r.Body, r.ContentEncoding = dst, dst.Bytes(), coding
}

var okBody = []byte("ok\n")

// textPlain is the media type of the health check and of failures to
// render metrics.
const textPlain = "text/plain; charset=utf-8"

// Handle answers one request: routing, negotiation, decoding, the store,
// encoding, content coding and metrics. Every engine serves the API
// through it, so they answer alike.
func (s *Server) Handle(r *Request, resp *Response) {
	switch r.Path {
	case "/healthz":
		resp.Status, resp.ContentType, resp.Body = http.StatusOK, textPlain, okBody
		return
	case "/metrics":
		s.metricsText(r, resp)
		return
	}
	rt, id := s.match(r.Path)
	s.serveRoute(rt, r, id, resp)
}

// match finds the route of path: "/users", "/todos", "/echo", or
// "/users/{id}", "/todos/{id}" with id one non-empty segment; anything else
// is the 404 route "/".
func (s *Server) match(path string) (*route, string) {
	// The routes are fields, not map entries: a map lookup hashed the
	// pattern on every request (issue 54).
	m := &s.matched
	switch path {
	case "/users":
		return m.users, ""
	case "/todos":
		return m.todos, ""
	case "/echo":
		return m.echo, ""
	case "/records":
		if m.records != nil {
			return m.records, ""
		}
	}
	if i := strings.LastIndexByte(path, '/'); i > 0 && i < len(path)-1 {
		switch path[:i] {
		case "/users":
			return m.user, path[i+1:]
		case "/todos":
			return m.todo, path[i+1:]
		case "/records":
			if m.record != nil {
				return m.record, path[i+1:]
			}
		}
	}
	return m.notFound, ""
}

// Fail answers a request the engine refused before the core saw its body
// (too large, too slow, ill-framed): err carries an api sentinel, and the
// {error, code} reply is in the format negotiated from r's headers.
func (s *Server) Fail(r *Request, err error, resp *Response) {
	q := request{r: *r, s: s}
	in, _ := s.formats.request(r.ContentType)
	out, nerr := s.formats.response(r.Accept, in)
	if nerr != nil {
		out = s.formats.json
	}
	status := statusOf(err)
	s.respond(resp, &q, out, status, &api.Error{Error: err.Error(), Code: api.Code(err)})
}

// metricsText renders the counters and the runtime's and process's
// figures in the Prometheus text format.
func (s *Server) metricsText(r *Request, resp *Response) {
	b := s.metrics.appendRequests(nil)
	b = promtext.AppendHeader(b, replyHeldName, "Bytes of replies being written, held in the reply budget (serve --max-reply-memory).", promtext.Gauge)
	b = promtext.AppendUint(b, replyHeldName, uint64(max(s.replies.used.Load(), 0)))
	b = promtext.AppendHeader(b, replyBudgetName, "The reply budget: past it, replies are shed with 503 and Retry-After.", promtext.Gauge)
	b = promtext.AppendUint(b, replyBudgetName, uint64(s.replies.limit))
	b = promtext.AppendHeader(b, replyShedName, "Replies shed by the reply budget (503), before their encoding (the route's last reply would not fit) or after it, or before their encoding because the client went while they waited for an encoding slot or their connection's or source's share (client_gone).", promtext.Counter)
	b = promtext.AppendUint(b, replyShedName, s.replies.shedAfter.Load(), "when", "after_encoding")
	b = promtext.AppendUint(b, replyShedName, s.replies.shedBefore.Load(), "when", "before_encoding")
	b = promtext.AppendUint(b, replyShedName, s.replies.shedGone.Load(), "when", "client_gone")
	b = promtext.AppendHeader(b, connWaitingName, "Large replies waiting now for their connection's earlier ones to be written (a connection's replies being written hold at most 1/32 of the reply budget, or one reply).", promtext.Gauge)
	b = promtext.AppendUint(b, connWaitingName, uint64(max(s.replies.connWaiting.Load(), 0)))
	b = promtext.AppendHeader(b, connWaitedName, "Large replies that waited for their connection's earlier ones to be written.", promtext.Counter)
	b = promtext.AppendUint(b, connWaitedName, s.replies.connWaited.Load())
	b = promtext.AppendHeader(b, srcWaitingName, "Large replies waiting now for their source's (client address's) unread ones to be written (a source's replies not being read hold at most 1/8 of the reply budget, or one reply).", promtext.Gauge)
	b = promtext.AppendUint(b, srcWaitingName, uint64(max(s.replies.srcWaiting.Load(), 0)))
	b = promtext.AppendHeader(b, srcWaitedName, "Large replies that waited for their source's unread ones to be written.", promtext.Counter)
	b = promtext.AppendUint(b, srcWaitedName, s.replies.srcWaited.Load())
	b = promtext.AppendHeader(b, droppedName, "Large replies their client dropped before reading them (a reset stream, a closed connection, a write timeout): their unread bytes count against the source's share until a reader taking 512 KiB/s would have finished them.", promtext.Counter)
	b = promtext.AppendUint(b, droppedName, s.replies.droppedUnread.Load())
	b = promtext.AppendGo(b)
	b, err := promtext.AppendProcess(b)
	if err != nil {
		// What could be read is served; a comment says what is missing.
		b = append(b, "# process metrics incomplete: "...)
		b = append(b, strings.ReplaceAll(err.Error(), "\n", " ")...)
		b = append(b, '\n')
	}
	resp.Status, resp.ContentType, resp.Body = http.StatusOK, promtext.ContentType, b
	resp.encode(r.AcceptEncoding)
}
