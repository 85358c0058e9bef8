package scenario

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/codec"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/h1"
	"github.com/wirebench/wirebench/load/h2"
	"github.com/wirebench/wirebench/load/h3"
	"github.com/wirebench/wirebench/load/traceparent"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/payload"
	"github.com/wirebench/wirebench/results"
)

// Scenario names against the reference API.
const (
	CRUD   = "crud"   // the TOON seed's iteration: list, create, get, update, delete
	Echo   = "echo"   // the Fiber seed: POST /echo, message checked
	Get    = "get"    // GET /users/{id} over the seeded users
	List   = "list"   // GET /users, count checked
	Create = "create" // create then delete, so the dataset stays fixed
	// Records is CRUD over the user's records (serve --data): list, create,
	// get, update, delete, every reply compared with Options.Records.
	Records = "records"
)

// TransportGRPC drives the reference API's gRPC services.
const TransportGRPC = conn.GRPC

// Options configure a reference-API scenario. The zero value
// (plus Name and URL) is JSON over lean HTTP/1.1 keep-alive.
type Options struct {
	Name string `json:"name"`
	// Options are where and how to connect (package conn): URL is
	// http(s)://host:port of the REST API (host:port alone is http://),
	// or host:port of the gRPC API with Transport "grpc"; the transport
	// is http1 (default), h2c, h2, h3 (https://), auto (https://: as
	// Alt-Svc advertises) or grpc; Client is ClientLean (default: ours,
	// for HTTP/1.1 and gRPC) or ClientStd (net/http's Transport on
	// HTTP/1.1, grpc-go on gRPC); ZeroRTT (h3) sends each connection's
	// GETs before its handshake completes as 0-RTT early data, the other
	// methods wait for it.
	conn.Options
	Format string `json:"format"` // codec name; ignored by gRPC (always protobuf)
	// Compression "gzip" asks the REST API for gzip-coded responses
	// (Accept-Encoding) and decodes them before the checks; request bodies
	// stay uncompressed. Body bytes then count the coded payload.
	Compression string `json:"compression,omitempty"`
	// Traceparent sends a W3C traceparent header with a fresh trace ID
	// on every REST request (as gRPC metadata on gRPC), as raw mode's
	// RawOptions.Traceparent does, so the run's slowest requests can be
	// found in the server's logs.
	Traceparent bool `json:"traceparent,omitempty"`
	// Data names the file of the user's records the server serves
	// (scenario records), and Records holds them as read, the reference
	// every reply is checked against.
	Data    string           `json:"data,omitempty"`
	Records *payload.Dataset `json:"-"`
	// Segment is the share of a test this client runs (load --segment
	// i/n; package spec sets it from the load options) and WholeVUs the
	// whole test's VUs: in scenario records each segment's VUs create
	// copies under keys of their own, and the checks allow for the copies
	// the other segments' VUs may hold.
	Segment  results.Segment `json:"-"`
	WholeVUs int             `json:"-"`
}

// apiScenario is the Scenario of every reference-API scenario: it owns the
// shared connections and the dataset snapshot the checks compare with.
type apiScenario struct {
	o     Options
	ops   []string
	entry codec.Entry
	c     *conn.Conns // the transport's TLS and pools
	addr  string      // host:port dialed (with --transport auto, Alt-Svc's)
	host  string      // host[:port] of the URL, the requests' authority
	h2    *h2.Pool    // c's
	h3    *h3.Pool
	grpc  *h2.GRPCPool
	vus   atomic.Int64

	once     sync.Once
	seed     api.UserList // the dataset at the start, for get and list checks
	seedErr  error
	echoReq  encoded[api.EchoRequest]
	echoWant string
	// recWant are the records prepared for checking (scenario records).
	recOnce sync.Once
	recWant []*payload.Expected
	recErr  error
}

var scenarioOps = map[string][]string{
	CRUD:    {"list users", "create user", "get user", "update user", "delete user"},
	Echo:    {"echo"},
	Get:     {"get user"},
	List:    {"list users"},
	Create:  {"create user", "delete user"},
	Records: {"list records", "create record", "get record", "update record", "delete record"},
}

// New validates o and prepares the shared state; connections are
// made lazily by the VUs.
func New(o Options) (load.Scenario, error) {
	ops, ok := scenarioOps[o.Name]
	if !ok {
		return nil, fmt.Errorf("%w: scenario %q (want crud, echo, get, list, create, records)", load.ErrOptions, o.Name)
	}
	if o.Name == Records && o.Records == nil {
		return nil, fmt.Errorf("%w: scenario records needs the records (--data)", load.ErrOptions)
	}
	if o.Name == Records && o.Transport == TransportGRPC && o.Records.Service() == nil {
		return nil, fmt.Errorf("%w: scenario records over gRPC needs the records' schema (--proto or --protoset): the server's wirebench.records.Records is built from it", load.ErrOptions)
	}
	if o.Format == "" {
		o.Format = "json"
	}
	if o.Timeout == 0 {
		o.Timeout = 10 * time.Second
	}
	switch o.Compression {
	case "", "gzip":
	default:
		return nil, fmt.Errorf("%w: compression %q (want gzip or none)", load.ErrOptions, o.Compression)
	}
	var entry codec.Entry
	if o.Transport == TransportGRPC {
		if o.Compression != "" {
			return nil, fmt.Errorf("%w: compression applies to the REST transports", load.ErrOptions)
		}
	} else {
		e, ok := codec.Lookup(o.Format)
		if !ok {
			return nil, fmt.Errorf("%w: format %q (have %s)", load.ErrOptions, o.Format, strings.Join(codec.Formats(), ", "))
		}
		if e.Codec.Name() == "json" {
			// The client decodes JSON with the fast library whatever the
			// server uses: it measures the server, so its own decoder must
			// be the cheapest available (same bytes, same media type).
			e = codec.Entry{Codec: codec.MustLookup("json-fast").Codec, MediaTypes: e.MediaTypes}
		}
		entry = e
		if !strings.Contains(o.URL, "://") {
			o.URL = "http://" + o.URL // host:port
		}
	}
	c, err := conn.New(o.Options, conn.Speaks{Transports: []string{conn.HTTP1, conn.H2C, conn.H2, conn.H3, TransportGRPC}, Method: "GET"})
	if err != nil {
		return nil, err
	}
	o.Options = c.Options()
	s := &apiScenario{o: o, ops: ops, entry: entry, c: c, addr: c.Addr, host: c.Addr, h2: c.H2, h3: c.H3, grpc: c.GRPC}
	if c.Target != nil {
		s.host = c.Target.Host
	}
	s.echoReq.v = api.EchoRequest{FirstMessage: "Hello, ", SecondMessage: "wirebench!"}
	s.echoWant = api.Echo(s.echoReq.v).Message
	if s.echoReq.body, err = s.encode(&s.echoReq.v); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *apiScenario) Ops() []string { return s.ops }

// Driver implements Scenario.
func (s *apiScenario) Driver() load.Driver { return load.PerVU }

// Finish implements Scenario: the shared h2c or gRPC connections' bytes
// and the h2c requests resent.
func (s *apiScenario) Finish(res *results.Load) {
	res.Conn = load.ConnResult(s.o.URL, s.o.Transport, s.c.Auto, s.H3Handshakes(), s.H3ZeroRTT())
	if s.h3 != nil {
		s.h3.Close() // every VU closed: CONNECTION_CLOSE goes out, counted
		s.h3.Finish(res)
	}
	in, out := s.WireBytes()
	res.Bytes.WireIn += in
	res.Bytes.WireOut += out
	h2.ResentWarning(res, s.Resent())
	if s.o.Name == Records {
		s.countRecords(res)
	}
}

// Resent is the h2c requests resent.
func (s *apiScenario) Resent() int64 {
	if s.h2 == nil {
		return 0
	}
	return s.h2.Resent()
}

// WireBytes is the bytes of the shared h2c and gRPC connections.
func (s *apiScenario) WireBytes() (in, out int64) {
	switch {
	case s.h2 != nil:
		return s.h2.Bytes.In.Load(), s.h2.Bytes.Out.Load()
	case s.grpc != nil:
		return s.grpc.Bytes.In.Load(), s.grpc.Bytes.Out.Load()
	case s.h3 != nil:
		return s.h3.Bytes.In.Load(), s.h3.Bytes.Out.Load()
	}
	return 0, 0
}

func (s *apiScenario) encode(v any) ([]byte, error) {
	if s.entry.Codec == nil {
		return nil, nil // gRPC marshals per call
	}
	b, err := s.entry.Codec.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("load: pre-encode %T as %s: %w", v, s.o.Format, err)
	}
	return b, nil
}

// client makes VU id's client; wire counts its bytes on HTTP/1.1.
func (s *apiScenario) client(id int, wire *measure.Bytes) apiClient {
	switch {
	case s.grpc != nil:
		c := grpcClient{GRPCClient: s.grpc.Client(id, s.o.Timeout)}
		if s.o.Traceparent {
			c.tp = traceparent.NewGen()
		}
		return c
	case s.h2 != nil:
		return s.restClient(nil, s.h2.Client(id))
	case s.h3 != nil:
		return s.restClient(nil, s.h3.Client(id))
	case s.o.Client == conn.ClientStd:
		return s.restClient(nil, h1.NewStdClient(wire, s.o.Timeout, s.o.NoKeepAlive, s.c.H1TLS()))
	}
	return s.restClient(s.h1Conn(wire, !s.o.NoKeepAlive), nil)
}

// h1Conn is a lean HTTP/1.1 connection (over TLS for https://) whose
// bytes wire counts.
func (s *apiScenario) h1Conn(wire *measure.Bytes, keepAlive bool) *h1.Conn {
	c := h1.NewConn(s.addr, wire, s.o.Timeout, keepAlive)
	c.TLS = s.c.H1TLS()
	return c
}

func (s *apiScenario) restClient(h1 *h1.Conn, h2 *http.Client) *restClient {
	mt := s.entry.MediaTypes[0]
	c := &restClient{
		base: s.scheme() + s.host, host: s.host, codec: s.entry.Codec, h1: h1,
		header: []string{"Content-Type: " + mt, "Accept: " + mt}, h2: h2,
	}
	if s.o.Compression == "gzip" {
		c.header = append(c.header, "Accept-Encoding: gzip")
		c.gzip = new(gzip.Reader)
	}
	if s.o.Traceparent {
		c.header = append(c.header, traceparent.Header+": "+traceparent.Placeholder) // rewritten per request
		c.tp = traceparent.NewGen()
	}
	return c
}

// snapshot reads the dataset once, before the load, over a connection of
// its own whose bytes are not counted.
func (s *apiScenario) snapshot(ctx context.Context) error {
	s.once.Do(func() {
		aside, err := s.c.Aside()
		if err != nil {
			s.seedErr = err
			return
		}
		defer aside.Close()
		var c apiClient
		switch {
		case aside.GRPC != nil:
			c = grpcClient{GRPCClient: aside.GRPC.Client(0, s.o.Timeout)}
		case aside.H3 != nil:
			c = s.restClient(nil, aside.H3.Client(0))
		default:
			c = s.restClient(s.h1Conn(new(measure.Bytes), false), nil)
		}
		defer c.close()
		var o load.Outcome
		if !c.listUsers(ctx, &s.seed, &o) {
			s.seedErr = fmt.Errorf("load: reading the dataset from %s: %s", s.addr, o.Fail)
		}
	})
	return s.seedErr
}

// NewVU implements Scenario.
func (s *apiScenario) NewVU(ctx context.Context, id int, wire *measure.Bytes) (load.VU, error) {
	if s.o.Name != Echo && s.o.Name != Records {
		if err := s.snapshot(ctx); err != nil {
			return nil, err
		}
	}
	if id == 0 && s.h3 != nil { // the handshakes before the run, apart from latency
		if err := s.h3.Warm(ctx); err != nil {
			return nil, err
		}
	}
	s.vus.Add(1)
	base := apiVU{s: s, c: s.client(id, wire), id: id}
	switch s.o.Name {
	case Echo:
		return &echoVU{apiVU: base}, nil
	case Get:
		if len(s.seed.Users) == 0 {
			return nil, fmt.Errorf("%w: scenario get needs seeded users, the server has none", load.ErrOptions)
		}
		return &getVU{apiVU: base, next: id}, nil
	case List:
		return &listVU{apiVU: base}, nil
	case Records:
		return s.newRecordsVU(base)
	}
	v := &crudVU{apiVU: base, create: s.o.Name == Create}
	v.newUser.v = api.User{Name: fmt.Sprintf("wirebench vu%d", id), Email: fmt.Sprintf("vu%d@wirebench.test", id)}
	v.changed.v = api.User{Name: v.newUser.v.Name + " (updated)", Email: v.newUser.v.Email}
	var err error
	if v.newUser.body, err = s.encode(&v.newUser.v); err != nil {
		return nil, err
	}
	if v.changed.body, err = s.encode(&v.changed.v); err != nil {
		return nil, err
	}
	return v, nil
}

// Close releases the shared connections.
func (s *apiScenario) Close() error {
	s.c.Close()
	return nil
}

// Transport is the transport in effect and, with --transport auto, which
// it took and why.
func (s *apiScenario) Transport() (transport, auto string) { return s.o.Transport, s.c.Auto }

// H3ZeroRTT is the 0-RTT counts of an h3 --0rtt run (nil otherwise).
func (s *apiScenario) H3ZeroRTT() *h3.ZeroRTTStats {
	if s.h3 == nil {
		return nil
	}
	return s.h3.ZeroRTT()
}

// H3Handshakes is how long each QUIC handshake took over h3 (none
// otherwise): before the run, apart from the requests' latency.
func (s *apiScenario) H3Handshakes() []time.Duration {
	if s.h3 == nil {
		return nil
	}
	return s.h3.Handshakes()
}

// scheme is the REST API's: https:// over TLS (h3 included), else http://.
func (s *apiScenario) scheme() string {
	if s.c.TLS != nil {
		return "https://"
	}
	return "http://"
}
