package grpcany

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"text/template"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/h2"
	"github.com/wirebench/wirebench/load/wire"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// ErrOptions reports options that cannot run (load's and results').
var ErrOptions = load.ErrOptions

// Protocols, as --protocol names them.
const (
	GRPC    = "grpc"
	GRPCWeb = "grpc-web"
	Connect = "connect"
)

// DefaultMessages is the messages a client or bidi stream sends per call.
const DefaultMessages = 10

// Options configure a run of one method.
type Options struct {
	// Options are where and how to connect (package conn): URL is the
	// server's host:port (or http://host:port); Client "std" makes unary
	// calls with grpc-go instead of the lean client (streams always run
	// on grpc-go); Connections are shared by the VUs; Timeout is each
	// call's deadline, sent to the server as grpc-timeout.
	conn.Options
	// Method is pkg.Service/Method (or pkg.Service.Method).
	Method string `json:"method"`
	// Where the descriptors come from: .proto files compiled in process
	// (Protos, with ImportPaths), a FileDescriptorSet (Protoset), or, when
	// neither is set, the server's reflection (v1, else v1alpha).
	Protos      []string `json:"protos,omitempty"`
	ImportPaths []string `json:"import_paths,omitempty"`
	Protoset    string   `json:"protoset,omitempty"`
	// Data is the request as a JSON template (CallData); DataFile holds
	// one per line (JSON lines), used in turn. Neither: the empty message.
	Data     string `json:"data,omitempty"`
	DataFile string `json:"data_file,omitempty"`
	// Metadata is sent with every call: "key: value" (or key:value).
	Metadata []string `json:"metadata,omitempty"`
	// Protocol is grpc (""), grpc-web or connect.
	Protocol string `json:"protocol,omitempty"`
	// Expect are checks on every response message (Expect).
	Expect []string `json:"expect,omitempty"`
	// Messages per client or bidi stream (0: DefaultMessages).
	Messages int `json:"messages,omitempty"`
}

// Scenario calls one method: a load.Scenario whose one operation is the
// method, every response checked (status OK, then Expect).
type Scenario struct {
	o       Options
	m       *Method
	reqs    *Requests
	expects []*Expect
	md      [][2]string
	conns   *conn.Conns
	next    atomic.Int64 // the next request number ({{.N}})
	stats   *streamStats // streaming methods
	// the connections' bytes at the last Finish
	wireIn, wireOut int64
	// gRPC-Web and Connect (connect.go): the base URL, and the VUs'
	// bytes by layer since the last Finish
	base   string
	layers *wire.Counter
}

// New resolves the method's descriptors (reflection asks the server, so
// New connects once before the run), checks the request templates and the
// expectations against the messages, and prepares the connections. Every
// error is a usage error (ErrOptions) but a server that reflection could
// not reach (ErrUnreachable).
func New(ctx context.Context, o Options) (*Scenario, error) {
	o.Protocol = cmp.Or(o.Protocol, GRPC)
	if o.Protocol != GRPC && o.Protocol != GRPCWeb && o.Protocol != Connect {
		return nil, fmt.Errorf("%w: --protocol %q (want grpc, grpc-web or connect)", ErrOptions, o.Protocol)
	}
	if o.Method == "" {
		return nil, fmt.Errorf("%w: no method: want --grpc pkg.Service/Method", ErrOptions)
	}
	if o.Protoset != "" && len(o.Protos) > 0 {
		return nil, fmt.Errorf("%w: --proto or --protoset, not both", ErrOptions)
	}
	if o.Messages <= 0 {
		o.Messages = DefaultMessages
	}
	o.Timeout = cmp.Or(o.Timeout, 10*time.Second)
	if o.Protocol == GRPC {
		o.Transport = conn.GRPC
	}
	s := &Scenario{o: o}
	for _, h := range o.Metadata {
		k, v, ok := strings.Cut(h, ":")
		k = strings.ToLower(strings.TrimSpace(k))
		if !ok || k == "" {
			return nil, fmt.Errorf("%w: -H %q: want 'key: value'", ErrOptions, h)
		}
		s.md = append(s.md, [2]string{k, strings.TrimSpace(v)})
	}
	var err error
	if s.m, err = s.resolve(ctx); err != nil {
		return nil, err
	}
	if s.reqs, err = NewRequests(s.m, o.Data, o.DataFile); err != nil {
		return nil, err
	}
	for _, x := range o.Expect {
		e, err := ParseExpect(x, s.m.Desc.Output())
		if err != nil {
			return nil, err
		}
		s.expects = append(s.expects, e)
	}
	if s.m.Kind() != KindUnary {
		s.stats = newStreamStats()
	}
	if o.Protocol != GRPC {
		if err := s.connectSetup(); err != nil { // connect.go
			return nil, err
		}
		return s, nil
	}
	co := o.Options
	if s.m.Kind() != KindUnary {
		co.Client = conn.ClientStd // the lean client makes unary calls only
	}
	if s.conns, err = conn.New(co, conn.Speaks{Transports: []string{conn.GRPC}}); err != nil {
		return nil, err
	}
	s.o.Options = s.conns.Options()
	return s, nil
}

// resolve finds o.Method's descriptors: in .proto files, a protoset, or
// by the server's reflection.
func (s *Scenario) resolve(ctx context.Context) (*Method, error) {
	switch o := s.o; {
	case len(o.Protos) > 0:
		return compile(ctx, o.Protos, o.ImportPaths, o.Method)
	case o.Protoset != "":
		return protoset(o.Protoset, o.Method)
	}
	return s.reflect(ctx)
}

// reflect resolves the method by the server's reflection, on a grpc-go
// connection of its own, closed after.
func (s *Scenario) reflect(ctx context.Context) (*Method, error) {
	co := s.o.Options
	co.Client, co.Connections, co.Transport = conn.ClientStd, 1, conn.GRPC
	c, err := conn.New(co, conn.Speaks{Transports: []string{conn.GRPC}})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, s.o.Timeout)
	defer cancel()
	if len(s.md) > 0 { // a server may want its credentials for reflection too
		ctx = metadata.NewOutgoingContext(ctx, s.metadata())
	}
	return reflect(ctx, c.GRPC.ClientConn(0), c.Addr, s.o.Method)
}

func (s *Scenario) metadata() metadata.MD {
	md := metadata.MD{}
	for _, kv := range s.md {
		md.Append(kv[0], kv[1])
	}
	return md
}

// Method is the resolved method.
func (s *Scenario) Method() *Method { return s.m }

// Options are the options in effect.
func (s *Scenario) Options() Options { return s.o }

// Name implements load.Scenario.
func (s *Scenario) Name() string { return "grpc " + s.m.Name() }

// Ops implements load.Scenario: one operation, the method, so the
// result's per-operation histogram is the method's.
func (s *Scenario) Ops() []string { return []string{s.m.Name()} }

// Driver implements load.Scenario.
func (s *Scenario) Driver() load.Driver { return load.PerVU }

// Finish implements load.Scenario: the shared connections' bytes, and the
// stream section of a streaming method, since the last Finish: a
// capacity search runs the scenario once per step, on the same
// connections.
func (s *Scenario) Finish(res *results.Load) {
	tr := conn.GRPC // the connection's transport: h2c or h2, or HTTP/1.1 for gRPC-Web and Connect
	switch {
	case s.o.Protocol == GRPC:
	case s.connectH2() && s.conns.TLS != nil:
		tr = conn.H2
	case s.connectH2():
		tr = conn.H2C
	default:
		tr = conn.HTTP1
	}
	res.Conn = load.ConnResult(s.o.URL, tr, "", nil, nil)
	if p := s.conns.GRPC; p != nil {
		in, out := p.Bytes.In.Load(), p.Bytes.Out.Load()
		res.Bytes.WireIn += in - s.wireIn
		res.Bytes.WireOut += out - s.wireOut
		s.wireIn, s.wireOut = in, out
	}
	if s.layers != nil {
		res.Layers = &results.Split{In: s.layers.In(), Out: s.layers.Out()}
		if s.conns.TLS != nil {
			tlsOther(&res.Layers.In, res.Bytes.WireIn)
			tlsOther(&res.Layers.Out, res.Bytes.WireOut)
		}
		s.layers = new(wire.Counter) // the next run's VUs dial anew
	}
	if s.stats != nil {
		res.Stream = s.stats.result(s.m.Kind())
		if res.Layers != nil {
			res.Stream.In, res.Stream.Out = res.Layers.In, res.Layers.Out
		}
		s.stats = newStreamStats()
	}
}

// Close releases the connections (Finish does after a run).
func (s *Scenario) Close() error {
	s.conns.Close()
	return nil
}

// NewVU implements load.Scenario.
func (s *Scenario) NewVU(_ context.Context, id int, wireBytes *measure.Bytes) (load.VU, error) {
	v := &vu{s: s, id: id, in: dynamicpb.NewMessage(s.m.Desc.Input()), out: dynamicpb.NewMessage(s.m.Desc.Output())}
	v.d = CallData{WorkerID: id, m: s.m}
	switch {
	case s.o.Protocol != GRPC:
		s.connectVU(v, wireBytes)
	case s.m.Kind() == KindUnary:
		v.cl = s.conns.GRPC.Client(id, s.o.Timeout)
		if len(s.md) > 0 {
			v.cl.SetMetadata(s.md)
		}
	default:
		v.cc = s.conns.GRPC.ClientConn(id)
		if len(s.md) > 0 {
			v.md = s.metadata()
		}
	}
	return v, nil
}

type vu struct {
	s       *Scenario
	id      int
	cl      *h2.GRPCClient   // unary
	cc      *grpc.ClientConn // streams
	md      metadata.MD      // streams
	in, out *dynamicpb.Message
	buf     bytes.Buffer
	d       CallData
	cx      *connect.Client[dynamicpb.Message, dynamicpb.Message] // gRPC-Web, Connect
	closeTr func()
}

func (v *vu) Close() error {
	if v.cl != nil {
		v.cl.Close()
	}
	if v.closeTr != nil {
		v.closeTr()
	}
	return nil
}

// Do implements load.VU: one call.
func (v *vu) Do(ctx context.Context, o *load.Outcome) {
	v.d.N = v.s.next.Add(1) - 1
	v.d.I = 0
	if v.cl != nil {
		v.unary(ctx, o)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, v.s.o.Timeout)
	defer cancel()
	if v.cx != nil {
		v.connectDo(ctx, o)
		return
	}
	if v.md != nil {
		ctx = metadata.NewOutgoingContext(ctx, v.md)
	}
	v.stream(ctx, o)
}

func (v *vu) unary(ctx context.Context, o *load.Outcome) {
	ctx = v.cl.CallCtx(ctx)
	var err error
	if v.cl.Lean() {
		var req []byte
		if req, err = v.s.reqs.Encode(&v.buf, &v.d, v.in); err != nil {
			v.requestFailed(o, err)
			return
		}
		err = v.cl.InvokeEncoded(ctx, v.s.m.Path, req, v.out)
	} else {
		if err = v.s.reqs.Message(&v.buf, &v.d, v.in); err != nil {
			v.requestFailed(o, err)
			return
		}
		err = v.cl.Invoke(ctx, v.s.m.Path, v.in, v.out)
	}
	sizeOut, sizeIn := v.cl.Sizes()
	o.BodyOut = sizeOut
	if !v.status(ctx, o, err) {
		return
	}
	o.BodyIn = sizeIn
	v.check(o, v.out)
}

// requestFailed fails a call whose request could not be made: its
// template failed, or rendered JSON that does not fit the message (request
// 0 was checked before the run, not every number). One reason per kind,
// not per value: failures are counted by reason.
func (v *vu) requestFailed(o *load.Outcome, err error) {
	o.Fail = "request: " + requestReason(err, v.s.m)
}

func requestReason(err error, m *Method) string {
	var te template.ExecError
	if errors.As(err, &te) {
		return "template failed"
	}
	return "does not fit " + string(m.Desc.Input().FullName())
}

// status fills o's status (and failure) from a call's error, grpc-go's,
// the lean client's or connect-go's.
func (v *vu) status(ctx context.Context, o *load.Outcome, err error) bool {
	return setStatus(ctx, o, err)
}

func setStatus(ctx context.Context, o *load.Outcome, err error) bool {
	code := status.Code(err)
	var ce *connect.Error
	if errors.As(err, &ce) {
		code = codes.Code(ce.Code())
	}
	o.Status = load.GRPCStatus(uint32(code))
	if err == nil {
		return true
	}
	o.Fail = "grpc " + code.String()
	if code == codes.DeadlineExceeded {
		if d, ok := ctx.Deadline(); ok && !d.After(time.Now()) {
			o.Fail = "timeout"
		}
	}
	return false
}

// check runs the expectations on one response message.
func (v *vu) check(o *load.Outcome, m *dynamicpb.Message) bool {
	for _, e := range v.s.expects {
		if !e.Check(m.ProtoReflect()) {
			o.Fail = "check: " + e.Expr
			return false
		}
	}
	return true
}

// stream makes one call of a streaming method over grpc-go: the request
// (one for a server stream, Messages for a client or bidi stream, each
// rendered with its own {{.I}}), then every response until the server
// ends the call, each checked.
func (v *vu) stream(ctx context.Context, o *load.Outcome) {
	t0 := time.Now()
	md := v.s.m.Desc
	ctx, cancel := context.WithCancel(ctx) // ends a call abandoned half-way
	defer cancel()
	st, err := v.cc.NewStream(ctx, &grpc.StreamDesc{ServerStreams: md.IsStreamingServer(), ClientStreams: md.IsStreamingClient()}, v.s.m.Path)
	if err != nil {
		v.status(ctx, o, err)
		return
	}
	sends := 1
	if md.IsStreamingClient() {
		sends = v.s.o.Messages
	}
	// The sender reports a request it could not make (nil otherwise: a
	// failed send ends the call, whose status the receiver reads).
	sendErr := make(chan error, 1)
	send := func(in *dynamicpb.Message) {
		for i := range sends {
			v.d.I = i
			if err := v.s.reqs.Message(&v.buf, &v.d, in); err != nil {
				cancel() // the server sees the call cancelled, not a short one
				sendErr <- err
				return
			}
			if st.SendMsg(in) != nil {
				sendErr <- nil
				return
			}
			o.BodyOut += proto.Size(in)
		}
		st.CloseSend() //nolint:errcheck // as SendMsg's
		sendErr <- nil
	}
	if md.IsStreamingClient() && md.IsStreamingServer() {
		// A bidi server may answer each message, some, or only at the
		// end: its replies are read while the messages go out.
		go send(dynamicpb.NewMessage(md.Input()))
	} else {
		send(v.in)
	}
	var items int
	var first time.Duration
	prev := t0
	for {
		err := st.RecvMsg(v.out)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if e := <-sendErr; e != nil {
				v.requestFailed(o, e)
				return
			}
			v.status(ctx, o, err)
			return
		}
		now := time.Now()
		if items == 0 {
			first = now.Sub(t0)
		} else {
			v.s.stats.gap(v.id, now.Sub(prev))
		}
		prev = now
		items++
		o.BodyIn += proto.Size(v.out)
		if !v.check(o, v.out) {
			cancel() // a sender blocked on flow control returns
			<-sendErr
			return
		}
		if !md.IsStreamingServer() {
			break // grpc-go read the status after the one reply (none is its error)
		}
	}
	if e := <-sendErr; e != nil {
		v.requestFailed(o, e)
		return
	}
	o.Status = load.GRPCStatus(0)
	v.s.stats.add(v.id, items, first, time.Since(t0))
}
