// Package httpapi is the reference API over HTTP/1.1 and h2c: REST routes
// for users, todos and echo in every registered wire format, with content
// negotiation, gzip and zstd content coding, body limits, health and
// Prometheus metrics.
package httpapi

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/codec"
	"github.com/wirebench/wirebench/internal/sema"
	"github.com/wirebench/wirebench/store"
)

// DefaultMaxBody is the default request body limit, on the wire and after
// decompression.
const DefaultMaxBody = 8 << 20

// DefaultMaxReplyBytes is the default budget for replies being written.
// The API's largest ordinary replies (lists of the seed data) are kilobytes
// to megabytes, so only clients that stop reading large lists reach it.
const DefaultMaxReplyBytes = 512 << 20

// Options configures a Server; the zero value is the default.
type Options struct {
	// JSONLib selects the library behind application/json: "std"
	// (encoding/json, the default) or "fast" (goccy/go-json).
	JSONLib string
	// MaxBody limits request bodies in bytes, on the wire and decoded
	// (DefaultMaxBody when 0). A larger body is answered with 413.
	MaxBody int64
	// MaxReplyBytes bounds the bytes of encoded replies held while being
	// written (DefaultMaxReplyBytes when 0). Clients that request large
	// lists and never read them each hold their reply until the write
	// timeout; past this budget further replies are shed with 503 and
	// Retry-After instead of piling up. A reply alone is always sent.
	// The budget is held until the adapter releases the Response (net/http:
	// after the write; fasthttp copies the body, so: after the copy).
	MaxReplyBytes int64
	// Delay is added to every API response by sleeping: extra latency that
	// costs no CPU, so a saturated closed-loop run barely notices it.
	// Burn spins the CPU for that long per response: lost capacity, which
	// any run notices. Both are known slowdowns for checking that a
	// comparison detects them (calibration), never for real runs.
	Delay, Burn time.Duration
	// Records, if set, serves the user's records at /records and
	// /records/{key} (serve --data; package payload's Dataset).
	Records Records
}

// Records is a dataset of the user's records, served in the formats it
// can represent: each method takes codec names (the negotiated request
// and reply formats) and returns the value that reply's codec encodes.
// Errors carry api sentinels. Implementations must be safe for
// concurrent use.
type Records interface {
	List(format string) (any, error)
	Get(key, format string) (any, error)
	Create(body []byte, in, out string) (any, error)
	Put(key string, body []byte, in, out string) (any, error)
	Delete(key string) error
}

// Server is the REST API; it is an http.Handler.
type Server struct {
	store   *store.Memory
	records Records
	formats *formats
	maxBody int64
	delay   time.Duration
	burn    time.Duration
	metrics *metrics
	routes  map[string]*route // by pattern
	matched matchedRoutes     // the same routes, as match finds them
	// contentTypes are the net/http engine's shared Content-Type values.
	contentTypes headerValues
	replies      replyBudget
	// slots bound the replies being produced at once (a handler's
	// snapshot and the encoder's buffers) to what the CPUs can work on:
	// encoding is CPU-bound, so more at once only adds memory.
	slots *sema.Sema
	// bigSlots are the slots of replies of bigReply or more (each takes
	// milliseconds of CPU): one fewer than the CPUs (at least one), so
	// such encodings never hold every P and the network and the other
	// requests keep one.
	bigSlots *sema.Sema
}

// New returns the REST API over st.
func New(st *store.Memory, opts Options) (*Server, error) {
	f, err := newFormats(opts.JSONLib)
	if err != nil {
		return nil, err
	}
	s := &Server{store: st, records: opts.Records, formats: f, maxBody: opts.MaxBody, delay: opts.Delay, burn: opts.Burn, metrics: newMetrics(), routes: map[string]*route{}}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBody
	}
	s.contentTypes = newHeaderValues(f)
	s.slots = sema.New(max(2, runtime.GOMAXPROCS(0)))
	s.bigSlots = sema.New(max(1, runtime.GOMAXPROCS(0)-1))
	s.replies.limit = opts.MaxReplyBytes
	if s.replies.limit <= 0 {
		s.replies.limit = DefaultMaxReplyBytes
	}
	s.replies.connShare = connShareOf(s.replies.limit)
	s.replies.srcShare = sourceShareOf(s.replies.limit)
	// Methods are dispatched in the handlers, not in the patterns, so that
	// a wrong method gets a 405 with an error body in the negotiated format.
	s.route("/users", map[string]handlerFunc{"GET": s.listUsers, "POST": s.createUser})
	s.route("/users/{id}", map[string]handlerFunc{"GET": s.getUser, "PUT": s.updateUser, "DELETE": s.deleteUser})
	s.route("/todos", map[string]handlerFunc{"GET": s.listTodos, "POST": s.createTodo})
	s.route("/todos/{id}", map[string]handlerFunc{"GET": s.getTodo, "PUT": s.updateTodo, "DELETE": s.deleteTodo})
	s.route("/echo", map[string]handlerFunc{"POST": s.echo})
	if s.records != nil {
		s.route("/records", map[string]handlerFunc{"GET": s.listRecords, "POST": s.createRecord})
		s.route("/records/{key}", map[string]handlerFunc{"GET": s.getRecord, "PUT": s.putRecord, "DELETE": s.deleteRecord})
	}
	s.route("/", nil) // everything else: 404 in the negotiated format
	s.matched = matchedRoutes{
		users: s.routes["/users"], user: s.routes["/users/{id}"],
		todos: s.routes["/todos"], todo: s.routes["/todos/{id}"],
		echo:    s.routes["/echo"],
		records: s.routes["/records"], record: s.routes["/records/{key}"], // nil without records
		notFound: s.routes["/"],
	}
	return s, nil
}

// matchedRoutes are the routes match returns.
type matchedRoutes struct {
	users, user, todos, todo, echo, records, record, notFound *route
}

// handlerFunc serves one route and method. It decodes the body with
// req.decode when it has one and returns the status and the value to encode
// (nil for no body), or an error carrying an api sentinel.
type handlerFunc func(req *request) (int, any, error)

// request is what a handlerFunc sees of the HTTP request.
type request struct {
	r       Request // a copy: the adapter's Request then stays on its stack
	id      string  // the {id} path segment
	s       *Server
	in      codec.Entry   // the request body's format, zero when no body was read
	out     codec.Entry   // the reply's format
	scratch *bytes.Buffer // the request body; taken on first use, released with the response
	slot    *sema.Sema    // the slots q holds one of, nil when none
	noSlot  bool          // the route's replies are small: no slot needed (slotFreeReply)
	big     bool          // the route's replies are big: one of s.bigSlots (bigReply)
	// The values a handler decodes into and returns a pointer to: a
	// local would escape to the heap through the handler's `any`, one
	// allocation per request; requests are pooled, so these cost none.
	// They are valid until the reply is encoded.
	user    api.User
	todo    api.Todo
	users   api.UserList
	todos   api.TodoList
	echoIn  api.EchoRequest
	echoOut api.EchoResponse
}

// requests pools the core's per-request state: a handler is called
// through a function value, so a request on the stack would escape anyway.
var requests = sync.Pool{New: func() any { return new(request) }}

// takeSlot takes an encoding slot unless q holds one or needs none
// (noSlot); it reports whether it waited for one.
func (q *request) takeSlot() (waited bool) {
	if q.slot == nil && !q.noSlot {
		q.slot = q.s.slots
		if q.big {
			q.slot = q.s.bigSlots
		}
		waited = q.slot.Acquire()
	}
	return waited
}

// done releases q's slot and returns q to the pool. Nothing may use q
// afterwards: the reply is encoded, so no body points into it.
func (q *request) done() {
	q.releaseSlot()
	*q = request{}
	requests.Put(q)
}

func (q *request) releaseSlot() {
	if q.slot != nil {
		q.slot.Release()
		q.slot = nil
	}
}

// decode reads the body in its Content-Type's format into v. Failures are
// 400, 413 or 415; nothing is written to the store before decode succeeds.
func (q *request) decode(v any) error {
	in, body, err := q.body()
	if err != nil {
		return err
	}
	if err := in.Codec.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%w: %s body: %v", api.ErrMalformed, in.Codec.Name(), err)
	}
	return nil
}

// body reads the body, in its Content-Type's format (415 when unknown,
// 413 past the limit); the bytes are valid until the reply is encoded.
func (q *request) body() (codec.Entry, []byte, error) {
	in, err := q.s.formats.request(q.r.ContentType)
	if err != nil {
		return in, nil, err
	}
	if q.scratch == nil {
		q.scratch = getBuffer()
	}
	if err := readBody(&q.r, q.scratch, q.s.maxBody); err != nil {
		return in, nil, err
	}
	return in, q.scratch.Bytes(), nil
}

// route is one path pattern and its methods.
type route struct {
	pattern string
	methods map[string]handlerFunc // nil: every method is a 404
	// handlers are methods by methodIndex: the lookup of every request,
	// without hashing the method as the map would.
	handlers [numMethods]handlerFunc
	allow    string
	counted  routeCounters
	// lastReply is the size of this route's last successful GET reply:
	// what the next one will likely hold of the reply budget.
	lastReply atomic.Int64
}

// slotFreeReply: a route whose last GET reply was smaller (one user, one
// todo) is served without an encoding slot. The slots bound the memory of
// lists snapshotted and encoded at once; a reply this small costs none
// worth bounding, and behind the slots it waited for every list queued
// before it: 1,000 never-read GETs of a 12 MB list held a GET of one user
// for the whole attack, and for minutes after it.
const slotFreeReply = 4 << 10

// bigReply: a route whose last GET reply was this big or more (a list of
// ~2,000 users; its encoding takes milliseconds) is encoded in one of the
// big slots, one fewer than the CPUs. With the server on 2 CPUs and
// 10 x 100 never-read GETs of a 12 MB list, two such encodings at once
// held both Ps and a GET of one user on an open connection waited its
// turn: p99 13.6 and 36 ms against 1.2-2.8 ms quiet; one at a time, 2.2
// and 2.8 ms.
const bigReply = 256 << 10

// big reports whether rt's replies may be big (bigReply): known to be,
// or not known yet — the first GETs of a list arrive together, and here
// the first ten were the attack's, encoded two at a time on both Ps.
func (rt *route) big() bool {
	n := rt.lastReply.Load()
	return n == 0 || n >= bigReply
}

// small reports whether rt's replies are known to be small enough to need
// no encoding slot.
func (rt *route) small() bool {
	n := rt.lastReply.Load()
	return n > 0 && n < slotFreeReply
}

// errClientGone answers a request whose client went while it waited for
// an encoding slot (nobody reads it).
var errClientGone = fmt.Errorf("%w: the client went away while the request waited", api.ErrUnavailable)

func (s *Server) route(pattern string, methods map[string]handlerFunc) {
	if get, ok := methods["GET"]; ok {
		// HEAD is GET without the body (RFC 9110 §9.3.2): same status and
		// headers, Content-Length included; the engine drops the body.
		methods["HEAD"] = get
	}
	rt := &route{pattern: pattern, methods: methods, allow: strings.Join(slices.Sorted(maps.Keys(methods)), ", ")}
	for m, h := range methods {
		i := methodIndex(m)
		if i < 0 {
			panic("httpapi: route " + pattern + ": no index for method " + m)
		}
		rt.handlers[i] = h
	}
	s.routes[pattern] = rt
}

// numMethods is the number of methods methodIndex knows: every method a
// route may have.
const numMethods = 5

// methodIndex is m's index in route.handlers, -1 for a method no route has.
func methodIndex(m string) int {
	switch m {
	case "GET":
		return 0
	case "HEAD":
		return 1
	case "POST":
		return 2
	case "PUT":
		return 3
	case "DELETE":
		return 4
	}
	return -1
}

// handler returns rt's handler of method m, nil when it has none.
func (rt *route) handler(m string) handlerFunc {
	if i := methodIndex(m); i >= 0 {
		return rt.handlers[i]
	}
	return nil
}

// serveRoute answers one API request on rt into resp.
func (s *Server) serveRoute(rt *route, r *Request, id string, resp *Response) {
	q := requests.Get().(*request)
	// q is zero (new, or cleared by done): set the fields, not the whole
	// struct (a copy of its every field, write barriers included).
	q.r, q.id, q.s = *r, id, s
	// Negotiate before the handler runs, so that a request whose reply
	// cannot be encoded (406) changes nothing.
	// A request with no Content-Type and no Accept (or */*), as load
	// tools send GETs, is answered in JSON: response's own first case,
	// taken here without the call and its copies of codec.Entry.
	var out codec.Entry
	var err error
	if ct := r.ContentType; ct != "" {
		q.in, _ = s.formats.request(ct) // an unknown type is decode's 415
		out, err = s.formats.response(r.Accept, q.in)
	} else if r.Accept == "" || r.Accept == "*/*" {
		out = s.formats.json
	} else {
		out, err = s.formats.response(r.Accept, q.in)
	}
	if err != nil {
		out = s.formats.json // DESIGN: JSON when no format can be negotiated
	}
	q.out = out
	if s.delay > 0 {
		time.Sleep(s.delay)
	}
	if s.burn > 0 {
		spin(s.burn)
	}
	// A request without a body holds an encoding slot from its handler
	// on: a list's snapshot and its encoding are the memory that many
	// concurrent list requests would pile up. Handlers that read a body
	// take the slot only to encode (a slow body must not hold one).
	// While the replies being written hold so much of the reply budget
	// that this route's last reply would not fit, a GET is shed before its
	// snapshot and its encoding: clients that never read a large list
	// would otherwise make the server encode every further one only to
	// throw it away, holding the encoding slots every other request
	// needs.
	// Checked again once the slot is ours: a burst of such GETs all
	// arrive before the first reply has taken its share.
	// A request that had to wait for its slot checks that its client is
	// still there: 1,000 never-read GETs of a 12 MB list, their clients
	// gone, each went on to snapshot and encode it for nobody, one slot
	// at a time, for minutes.
	// A large reply also takes its share of its connection's (connReplies),
	// before its slot: a connection whose earlier replies are not read
	// yet waits, holding neither; then, while its source's replies not
	// being read hold their share (Source), it waits too.
	// The big slots are for HTTP/3's connections (WithConnection, where a
	// client that never reads costs the server an encoding and nothing
	// of its own); over HTTP/1.1 they cost 18-26% of the lists a 2-CPU
	// server encodes a second.
	q.noSlot = rt.small()
	// The context's value is looked up once, and only for a reply that
	// takes a slot: a lookup walks the context's chain (net/http's holds
	// several values; ~100 instructions a GET), and a small reply uses
	// neither the connection's share nor a big slot (small and big
	// exclude each other).
	var conn *connReplies
	if !q.noSlot {
		conn = connOf(r.Context)
	}
	if conn != nil && conn.big {
		q.big = (r.Method == "GET" || r.Method == "HEAD") && rt.big()
	}
	shed := false
	if r.Method == "GET" || r.Method == "HEAD" {
		if shed = err == nil && !s.replies.fits(rt.lastReply.Load()); !shed {
			waited := false
			if c := conn; c != nil && !q.noSlot && err == nil {
				n, w, cerr := c.reserve(r.Context, &rt.lastReply, s.replies.connShare, &s.replies.connWaiting)
				waited = w
				if waited {
					s.replies.connWaited.Add(1)
				}
				if cerr == nil {
					resp.conn, resp.connHeld = c, n
				}
			}
			if resp.conn != nil || !waited {
				waited = s.takeSourcedSlot(q, resp.conn, &rt.lastReply) || waited
			}
			if shed = err == nil && !s.replies.fits(rt.lastReply.Load()); shed {
				q.releaseSlot()
			} else if waited && r.Context != nil && r.Context.Err() != nil {
				q.releaseSlot()
				shed, err = true, errClientGone
				s.replies.shedGone.Add(1)
			}
		}
		if shed && err == nil {
			err = s.replies.full()
			s.replies.shedBefore.Add(1)
		}
	}
	defer q.done() // also when a handler panics
	status, body := 0, any(nil)
	switch h := rt.handler(r.Method); {
	case err != nil:
	case h != nil:
		status, body, err = h(q)
	case rt.methods == nil:
		err = fmt.Errorf("%s: %w", r.Path, api.ErrNotFound)
	default:
		resp.Allow = rt.allow
		err = fmt.Errorf("%w: %s %s (allowed: %s)", api.ErrMethod, r.Method, rt.pattern, rt.allow)
	}
	if err != nil {
		status = statusOf(err)
		body = &api.Error{Error: err.Error(), Code: api.Code(err)}
	}
	resp.buf = q.scratch // nil unless a body was read; the reply's coding reuses it
	q.scratch = nil
	if shed {
		resp.Vary = true
		shedReply(resp, out, err)
	} else {
		s.respond(resp, q, out, status, body)
		if status == http.StatusOK && (r.Method == "GET" || r.Method == "HEAD") && resp.budget != nil {
			rt.lastReply.Store(int64(resp.held))
		}
	}
	if resp.conn != nil {
		// The connection's share holds what the reply budget holds: the
		// reply's bytes until Release, nothing for one shed or failed.
		held := int64(0)
		if resp.budget != nil {
			held = int64(resp.held)
		}
		resp.conn.adjust(resp.connHeld, held)
		if resp.connHeld = held; held == 0 {
			resp.conn = nil
		} else if src := resp.conn.src; src != nil {
			resp.src = src.add(held)
		}
	}
	s.metrics.count(&rt.counted, rt.pattern, out.Codec.Name(), resp.Status)
}

// takeSourcedSlot takes q's encoding slot (takeSlot) for a request of
// connection c (nil: none) while its source's unread replies leave room
// for one of the route's (Source.wait), checked again once the slot is
// taken: a burst of a source's GETs all pass the first check before any
// reply is held. It reports whether it waited; if the client went
// meanwhile, it returns with no slot and true.
func (s *Server) takeSourcedSlot(q *request, c *connReplies, last *atomic.Int64) (waited bool) {
	if c == nil || c.src == nil || q.noSlot {
		return q.takeSlot()
	}
	counted := false
	for {
		w, err := c.src.wait(q.r.Context, last, s.replies.srcShare, &s.replies.srcWaiting)
		if w && !counted {
			counted = true
			s.replies.srcWaited.Add(1)
		}
		if waited = waited || w; err != nil {
			return true
		}
		waited = q.takeSlot() || waited
		if c.src.fits(expected(last, s.replies.srcShare), s.replies.srcShare) {
			return waited
		}
		q.releaseSlot()
	}
}

// respond encodes body (none when nil) into resp in format out, with the
// content coding the client prefers. It encodes holding an encoding slot
// and releases it before the adapter writes (a slow reader must not hold
// one); the reply's bytes are held in the reply budget until resp.Release.
func (s *Server) respond(resp *Response, q *request, out codec.Entry, status int, body any) {
	resp.Vary = true
	resp.Status = status
	if body == nil {
		q.releaseSlot()
		return
	}
	q.takeSlot()
	if q.big {
		// A big slot's encoding yields its CPU to the network
		// (runLowPriority). o and r, not out and resp, go to the heap
		// with the closure (another goroutine runs it): only on this
		// path, beside milliseconds of encoding. Captured, resp itself
		// would be moved to the heap in every adapter, one allocation
		// per request of every route.
		o, r := out, new(Response)
		*r = *resp
		runLowPriority(func() { o = s.encodeReply(r, q, o, body) })
		*resp, out = *r, o
	} else {
		out = s.encodeReply(resp, q, out, body)
	}
	q.releaseSlot()
	if !s.replies.acquire(len(resp.Body)) {
		s.replies.shedAfter.Add(1)
		// Body no longer points into buf: the encoding goes now, not
		// when the 503 has been written.
		if resp.buf != nil {
			putBuffer(resp.buf)
			resp.buf = nil
		}
		shedReply(resp, out, s.replies.full())
		return
	}
	resp.held, resp.budget = len(resp.Body), &s.replies
}

// encodeReply encodes body into resp in format out (JSON if that fails:
// a 500), with the content coding the client prefers; it returns the
// format of the reply.
func (s *Server) encodeReply(resp *Response, q *request, out codec.Entry, body any) codec.Entry {
	var to codec.BufferMarshaler
	if out.Codec == s.formats.json.Codec {
		to = s.formats.jsonTo // the common reply: no type assertion
	}
	data, err := resp.marshal(out.Codec, to, body)
	if err != nil {
		resp.Status = http.StatusInternalServerError
		out = s.formats.json
		data, _ = out.Codec.Marshal(&api.Error{Error: "encoding response: " + err.Error(), Code: "internal"})
	}
	resp.ContentType = out.MediaTypes[0]
	resp.Body = data
	resp.encode(q.r.AcceptEncoding)
	return out
}

// shedReply makes resp the 503 of a reply shed by the budget. Its small
// error body is encoded without a slot and held outside the budget.
func shedReply(resp *Response, out codec.Entry, err error) {
	resp.Status = statusOf(err)
	resp.ContentType = out.MediaTypes[0]
	resp.Body, _ = out.Codec.Marshal(&api.Error{Error: err.Error(), Code: api.Code(err)})
	resp.ContentEncoding = ""
	resp.RetryAfter = "1"
}

// replyBudget counts the bytes of replies being written, so that clients
// that do not read cannot make the server hold unbounded memory.
type replyBudget struct {
	limit int64
	used  atomic.Int64
	// shedBefore and shedAfter count the replies shed before their
	// encoding (the route's last reply would not fit) and after it;
	// shedGone those whose client went while they waited for a slot or
	// their connection's share.
	shedBefore, shedAfter, shedGone atomic.Uint64
	// connShare is a connection's share (connReplies): a connection's
	// large replies being written hold at most this much, or one reply.
	connShare int64
	// connWaiting counts the requests waiting now for their connection's
	// share, connWaited those that did.
	connWaiting atomic.Int64
	connWaited  atomic.Uint64
	// srcShare is a source's share (Source): its large replies not being
	// read hold at most this much, or one reply; srcWaiting and
	// srcWaited count the requests waiting for it now and those that did.
	srcShare   int64
	srcWaiting atomic.Int64
	srcWaited  atomic.Uint64
	// droppedUnread counts the large replies their client dropped before
	// reading them, which count against their source's share a while
	// longer (Source).
	droppedUnread atomic.Uint64
}

// connShareOf: a connection's large replies hold at most 1/32 of the
// reply budget at once (16 MiB of the default 512), or one reply, so a
// client that stops reading pays for one large reply a connection, and
// 32 connections' worth still fit: a benchmark reading its replies
// pipelines lists of up to 1 MiB 16 deep on one connection unchanged.
func connShareOf(limit int64) int64 { return max(limit/32, 1) }

// sourceShareOf: a source's large replies not being read hold at most 1/8
// of the reply budget (64 MiB of the default 512), or one reply: a client
// address that stops reading on many connections pays for a few large
// replies, not the budget, and 8 such sources still fit.
func sourceShareOf(limit int64) int64 { return max(limit/8, 1) }

// acquire takes n bytes of the budget, or reports false when that would
// exceed it while other replies hold some (a reply alone always fits).
func (b *replyBudget) acquire(n int) bool {
	if u := b.used.Add(int64(n)); u > b.limit && u != int64(n) {
		b.used.Add(-int64(n))
		return false
	}
	return true
}

func (b *replyBudget) release(n int) { b.used.Add(-int64(n)) }

// fits reports whether n bytes would be taken now (acquire's rule); 0
// bytes (a route with no reply yet) always fit.
func (b *replyBudget) fits(n int64) bool {
	u := b.used.Load()
	return n == 0 || u == 0 || u+n <= b.limit
}

// full is the error of a reply shed by the budget.
func (b *replyBudget) full() error {
	return fmt.Errorf("%w: replies being written hold over %d bytes; retry", api.ErrUnavailable, b.limit)
}

// spin keeps the CPU busy for d of wall time.
func spin(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
}

// statusOf is the one table from API errors to HTTP status codes.
func statusOf(err error) int {
	switch {
	case errors.Is(err, api.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, api.ErrInvalid), errors.Is(err, api.ErrMalformed):
		return http.StatusBadRequest
	case errors.Is(err, api.ErrTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, api.ErrUnsupportedType):
		return http.StatusUnsupportedMediaType
	case errors.Is(err, api.ErrNotAcceptable):
		return http.StatusNotAcceptable
	case errors.Is(err, api.ErrMethod):
		return http.StatusMethodNotAllowed
	case errors.Is(err, api.ErrTimeout):
		return http.StatusRequestTimeout
	case errors.Is(err, api.ErrUnavailable):
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}
