package stream

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/h3"
	"github.com/wirebench/wirebench/load/wire"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// Stream scenarios: one operation is one whole exchange — a server stream
// of the whole list, a client stream or bidirectional exchange of
// Messages messages, a REST list, a unary call over one of the browser's
// transports — so the run's latency is the time to the last item. Per
// message they record the time to the first item and the per-message
// latency (the gap between consecutive items of a server stream, the
// round trip of each message of a bidirectional one, the send of each
// message of a client stream), and every connection's bytes split by
// layer (package wire). Every item is decoded and checked.
const (
	GRPCServer = "grpc-server-stream" // UserService.Stream, native gRPC
	GRPCClient = "grpc-client-stream" // UserService.CreateMany of Messages users (the dataset grows)
	GRPCBidi   = "grpc-bidi"          // EchoService.Chat, Messages round trips
	GRPCGet    = "grpc-get"           // UserService.Get, native gRPC (the tunnel's baseline)
	// StreamGRPCGetNewConn is UserService.Get on a new gRPC connection
	// each (dial, HTTP/2 preface and settings, the call, close): the
	// seed's connection table for gRPC.
	GRPCGetNewConn    = "grpc-get-new-conn"
	TunnelGet         = "tunnel-get" // UserService.Get through the gRPC-over-WebSocket tunnel
	TunnelSrv         = "tunnel-server-stream"
	ConnectGet        = "connect-get"           // UserService.Get, Connect protocol on the REST port (HTTP/1.1)
	ConnectSrv        = "connect-server-stream" // UserService.Stream over Connect
	GRPCWebGet        = "grpcweb-get"           // UserService.Get, gRPC-Web on the REST port (HTTP/1.1)
	GRPCWebSrv        = "grpcweb-server-stream"
	RESTList          = "rest-list" // GET /users, one JSON array
	NDJSON            = "ndjson"    // GET /users, Accept: application/x-ndjson
	SSE               = "sse"       // GET /users/events
	WebSocket         = "websocket" // /ws/echo, Messages round trips of JSON text messages
	defaultStreamMsgs = 100
)

// Kinds lists the stream scenarios.
func Kinds() []string {
	return []string{GRPCServer, GRPCClient, GRPCBidi, GRPCGet, GRPCGetNewConn, TunnelGet, TunnelSrv,
		ConnectGet, ConnectSrv, GRPCWebGet, GRPCWebSrv, RESTList, NDJSON, SSE, WebSocket}
}

// Options configure a stream scenario.
type Options struct {
	Kind string `json:"kind"`
	// Options are where and how to connect (package conn). URL is the
	// REST port (http://host:port): REST, NDJSON, SSE, WebSocket,
	// Connect, gRPC-Web and the tunnel (ws://host:port/grpc-ws).
	// Transport h3 runs the REST kinds (rest-list, ndjson, sse) over
	// HTTP/3 to an https:// URL (h3.go): Connections QUIC connections
	// shared by the VUs, the certificate checked against CAFile or not
	// at all (Insecure). Empty is HTTP/1.1, a connection per VU.
	conn.Options
	// GRPC is the gRPC port (host:port) for the native gRPC kinds.
	GRPC string `json:"grpc,omitempty"`
	// Messages per client-stream, bidi or WebSocket exchange (default 100).
	Messages int `json:"messages,omitempty"`
}

// streamStats are the scenario's measurements, one set per shard
// (measure.Shards, as the load engine's stats): a set of histograms per
// VU would grow with the VUs, not with what runs in parallel.
type streamStats struct {
	exchanges, items        int64
	first, last, perMessage *measure.Histogram
}

func newStreamStats(st *streamStats) {
	*st = streamStats{first: measure.NewHistogram(), last: measure.NewHistogram(), perMessage: measure.NewHistogram()}
}

// streamScenario holds what every stream kind shares: options, layer
// counters, merged statistics and shared connections.
type streamScenario struct {
	o      Options
	host   string // host:port of the REST port
	layers wire.Counter
	raw    measure.Bytes // shared connections' bytes (WireCounter)

	mu    sync.Mutex
	stats *measure.Shards[streamStats]
	// shared is the kind's shared connection state (a gRPC connection),
	// made on first use and closed by Close.
	shared     any
	sharedErr  error
	sharedOnce sync.Once
	closers    []func()
	final      *[2]results.Layers // the layers when WireBytes was read
	expect     int                // the list's length at the start (checked per exchange)
	h3         *h3.Pool           // Transport h3: the shared QUIC connections (conn.New's)
}

// New validates o and returns its scenario.
func New(o Options) (load.Scenario, error) {
	known := false
	for _, k := range Kinds() {
		known = known || k == o.Kind
	}
	if !known {
		return nil, fmt.Errorf("%w: stream kind %q (want one of %s)", load.ErrOptions, o.Kind, strings.Join(Kinds(), ", "))
	}
	if o.Messages <= 0 {
		o.Messages = defaultStreamMsgs
	}
	if o.Timeout == 0 {
		o.Timeout = 30 * time.Second
	}
	s := &streamScenario{o: o, stats: measure.NewShards(measure.ShardCount(load.MaxConcurrency), newStreamStats)}
	if o.URL != "" {
		u, err := url.Parse(o.URL)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("%w: stream URL %q: want http://host:port", load.ErrOptions, o.URL)
		}
		s.host = u.Host
	}
	if err := s.setupH3(); err != nil {
		return nil, err
	}
	if s.needsGRPCPort() && o.GRPC == "" {
		return nil, fmt.Errorf("%w: stream kind %s needs the gRPC address", load.ErrOptions, o.Kind)
	}
	if !s.needsGRPCPort() && s.host == "" {
		return nil, fmt.Errorf("%w: stream kind %s needs the REST URL", load.ErrOptions, o.Kind)
	}
	return s, nil
}

func (s *streamScenario) needsGRPCPort() bool {
	switch s.o.Kind {
	case GRPCServer, GRPCClient, GRPCBidi, GRPCGet, GRPCGetNewConn:
		return true
	}
	return false
}

func (s *streamScenario) Name() string  { return "stream " + s.o.Kind }
func (s *streamScenario) Ops() []string { return []string{Op(s.o.Kind)} }

// Op names a stream or browser kind's operation as the reference-API scenarios name
// theirs, so per-operation tables line up across cells of a group: a
// stream or a list of users is "list users", a unary call "get user".
func Op(kind string) string {
	switch kind {
	case GRPCGet, GRPCGetNewConn, TunnelGet, ConnectGet, GRPCWebGet,
		"fetch-json", "connect", "grpc-web", "ws-tunnel":
		return "get user"
	case GRPCBidi, WebSocket:
		return "echo exchange"
	case GRPCClient:
		return "create users"
	}
	return "list users"
}

// Driver implements Scenario.
func (s *streamScenario) Driver() load.Driver { return load.PerVU }

// Finish implements Scenario: the shared connections' bytes and the
// stream section.
func (s *streamScenario) Finish(res *results.Load) {
	in, out := s.WireBytes()
	res.Bytes.WireIn += in
	res.Bytes.WireOut += out
	res.Stream = s.streamResult()
	if s.h3 != nil {
		in, out = s.h3Finish(res)
		res.Bytes.WireIn += in
		res.Bytes.WireOut += out
	}
}

// WireBytes closes the shared connections (the run is over: Finish asks
// after the VUs closed) so that nothing more crosses them, then snapshots
// their bytes and the layers together, so the two agree exactly.
func (s *streamScenario) WireBytes() (in, out int64) {
	s.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	in, out = s.raw.In.Load(), s.raw.Out.Load()
	s.final = &[2]results.Layers{s.layers.In(), s.layers.Out()}
	return in, out
}

func (s *streamScenario) streamResult() *results.Stream {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, out := s.layers.In(), s.layers.Out()
	if s.final != nil {
		in, out = s.final[0], s.final[1]
	}
	var sum streamStats
	newStreamStats(&sum)
	s.stats.Each(func(st *streamStats) {
		sum.exchanges += st.exchanges
		sum.items += st.items
		sum.first.Merge(st.first)
		sum.last.Merge(st.last)
		sum.perMessage.Merge(st.perMessage)
	})
	return &results.Stream{Kind: s.o.Kind, Exchanges: sum.exchanges, Items: sum.items,
		First: sum.first, Last: sum.last, PerMessage: sum.perMessage, In: in, Out: out}
}

// Close releases the shared connections.
func (s *streamScenario) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.closers {
		c()
	}
	s.closers = nil
	if s.h3 != nil {
		return s.h3.Close()
	}
	return nil
}

func (s *streamScenario) NewVU(ctx context.Context, id int, wire *measure.Bytes) (load.VU, error) {
	v := &streamVU{s: s, wire: wire, id: id}
	if s.h3 != nil && id == 0 { // the handshakes before the run, apart from latency
		s.h3.Warm(ctx)
	}
	switch s.o.Kind {
	case GRPCServer, GRPCClient, GRPCBidi, GRPCGet, TunnelGet, TunnelSrv:
		v.do = v.grpcDo
	case GRPCGetNewConn:
		v.do = v.grpcNewConnDo
	case ConnectGet, ConnectSrv, GRPCWebGet, GRPCWebSrv:
		v.do = v.connectDo
	case RESTList, NDJSON, SSE:
		v.do = v.httpDo
	case WebSocket:
		v.do = v.wsDo
	}
	return v, nil
}

// streamVU is one worker of a stream scenario.
type streamVU struct {
	id   int
	s    *streamScenario
	n    int64 // exchanges done, for nextID
	wire *measure.Bytes
	do   func(ctx context.Context, o *load.Outcome, t0 time.Time) (items int, first, last time.Duration, ok bool)
	// per-VU connection state, made lazily by the kind
	conn   any
	closer func()
}

func (v *streamVU) Do(ctx context.Context, o *load.Outcome) {
	if v.s.o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, v.s.o.Timeout)
		defer cancel()
	}
	t0 := time.Now()
	items, first, last, ok := v.do(ctx, o, t0)
	if !ok {
		if o.Fail == "" {
			o.Fail = "stream failed"
		}
		if ctx.Err() != nil && o.Fail != "timeout" && strings.Contains(o.Fail, "deadline") {
			o.Fail = "timeout"
		}
		return
	}
	v.n++
	i := v.s.stats.Lock(v.id)
	st := v.s.stats.At(i)
	st.exchanges++
	st.items += int64(items)
	st.first.Record(first)
	st.last.Record(last)
	v.s.stats.Unlock(i)
}

func (v *streamVU) Close() error {
	if v.closer != nil {
		v.closer()
	}
	return nil
}

// gap records the per-message latency between two item times.
func (v *streamVU) gap(prev, now time.Duration) { v.perMessage(now - prev) }

// perMessage records one message's latency.
func (v *streamVU) perMessage(d time.Duration) {
	i := v.s.stats.Lock(v.id)
	v.s.stats.At(i).perMessage.Record(d)
	v.s.stats.Unlock(i)
}

// getIDs is how many seeded users (ids 1..getIDs) the unary kinds cycle
// through: the server must hold at least these.
const getIDs = 10

func (v *streamVU) nextID() int64 { return 1 + v.n%getIDs }
