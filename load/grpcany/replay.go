package grpcany

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/h2"
	"github.com/wirebench/wirebench/load/replay"
	"github.com/wirebench/wirebench/load/replay/reqlog"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// MaxReplayMethods bounds the distinct methods of a recording: each is an
// operation of the result, with its own histogram.
const MaxReplayMethods = 64

// ReplayOptions configure a replay of a recording of gRPC calls
// (replay.FormatGRPC) at its recorded times × 1/Speed, open loop.
type ReplayOptions struct {
	// Options are the connection (URL host:port or https://host:port,
	// Client, Connections, Timeout, TLS), where the descriptors come from
	// (Protos, ImportPaths, Protoset, else reflection) and Metadata sent
	// with every call besides each call's recorded metadata. Protocol is
	// grpc; Method, Data, DataFile, Expect and Messages are not used.
	Options
	File   string
	Speed  float64       // 0: 1
	Loop   bool          // repeat the recording (until the run's -d)
	MaxGap time.Duration // replay.ScheduleOptions.MaxGap
}

// Replay sends a recording of gRPC calls: a load.Scenario whose schedule
// (Pacer) goes into load.Options.Pacer, one operation per method, each
// call checked against its recorded status (OK when none was recorded).
// A unary call or server stream sends its one recorded message, a client
// or bidi stream its recorded messages in order, as fast as flow control
// lets them go (their spacing within the call is not recorded); a stream
// reads every reply until the server ends it. Streams run on grpc-go,
// unary calls on the client Options name. Close it after the run.
type Replay struct {
	o       ReplayOptions
	methods []*Method      // by operation
	ops     map[string]int // "/pkg.Service/Method" → operation
	md      [][2]string
	sched   *replay.Schedule
	conns   *conn.Conns
	streams *conn.Conns // grpc-go's, for streaming methods when conns are the lean client's; else nil
	un      protojson.UnmarshalOptions
	// the connections' bytes at the last Finish
	wireIn, wireOut int64
}

// NewReplay reads the recording once for its methods, resolves each
// (reflection asks the server), refuses what it cannot replay, and
// starts the schedule. Errors are usage errors (ErrOptions, or
// replay.ErrReplay for the file) but a server that reflection could not
// reach.
func NewReplay(ctx context.Context, o ReplayOptions) (*Replay, error) {
	if o.Protocol != "" && o.Protocol != GRPC {
		return nil, fmt.Errorf("%w: a recording of gRPC calls is replayed over gRPC, not --protocol %s", ErrOptions, o.Protocol)
	}
	if o.Protoset != "" && len(o.Protos) > 0 {
		return nil, fmt.Errorf("%w: --proto or --protoset, not both", ErrOptions)
	}
	o.Protocol, o.Transport = GRPC, conn.GRPC
	o.Timeout = cmp.Or(o.Timeout, 10*time.Second)
	open := func() (replay.Source, io.Closer, error) {
		return replay.Open(o.File, replay.FormatGRPC, replay.FieldMap{})
	}
	paths, err := recordedMethods(open)
	if err != nil {
		return nil, err
	}
	r := &Replay{o: o, ops: map[string]int{}, un: protojson.UnmarshalOptions{}}
	probe := &Scenario{o: o.Options}
	if probe.md, err = parseMetadata(o.Metadata); err != nil {
		return nil, err
	}
	r.md = probe.md
	streams := false
	for _, p := range paths {
		probe.o.Method = strings.TrimPrefix(p, "/")
		m, err := probe.resolve(ctx)
		if err != nil {
			return nil, err
		}
		streams = streams || m.Kind() != KindUnary
		r.ops[p] = len(r.methods)
		r.methods = append(r.methods, m)
	}
	if r.conns, err = conn.New(o.Options.Options, conn.Speaks{Transports: []string{conn.GRPC}}); err != nil {
		return nil, err
	}
	r.o.Options.Options = r.conns.Options()
	if streams && r.conns.GRPC.ClientConn(0) == nil { // the lean client makes unary calls only
		so := r.o.Options.Options
		so.Client = conn.ClientStd
		if r.streams, err = conn.New(so, conn.Speaks{Transports: []string{conn.GRPC}}); err != nil {
			r.conns.Close()
			return nil, err
		}
	}
	r.sched, err = replay.NewSchedule(open, replay.ScheduleOptions{Speed: o.Speed, Loop: o.Loop, MaxGap: o.MaxGap,
		Op: func(q *reqlog.Request) int { return r.ops[q.Target] }})
	if err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// recordedMethods reads the recording once for its distinct methods, in
// order of first call.
func recordedMethods(open func() (replay.Source, io.Closer, error)) ([]string, error) {
	src, c, err := open()
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var paths []string
	for {
		q, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", replay.ErrReplay, err)
		}
		if !slices.Contains(paths, q.Target) {
			if len(paths) == MaxReplayMethods {
				return nil, fmt.Errorf("%w: more than %d methods in the recording", replay.ErrReplay, MaxReplayMethods)
			}
			paths = append(paths, q.Target)
		}
	}
	if len(paths) == 0 {
		bad := src.Malformed()
		return nil, fmt.Errorf("%w: no gRPC call in the recording (%d lines skipped: %s)", replay.ErrReplay, bad.N, strings.Join(bad.Examples, "; "))
	}
	return paths, nil
}

func parseMetadata(hs []string) ([][2]string, error) {
	var md [][2]string
	for _, h := range hs {
		k, v, ok := strings.Cut(h, ":")
		k = strings.ToLower(strings.TrimSpace(k))
		if !ok || k == "" {
			return nil, fmt.Errorf("%w: -H %q: want 'key: value'", ErrOptions, h)
		}
		md = append(md, [2]string{k, strings.TrimSpace(v)})
	}
	return md, nil
}

// Pacer is the schedule, for load.Options.Pacer.
func (r *Replay) Pacer() load.Pacer { return r.sched }

// Stats is what the schedule read (complete after Finish or Close).
func (r *Replay) Stats() replay.Stats { return r.sched.Stats() }

// Name implements load.Scenario.
func (r *Replay) Name() string { return "replay grpc" }

// Ops implements load.Scenario: the recording's methods.
func (r *Replay) Ops() []string {
	ops := make([]string, len(r.methods))
	for i, m := range r.methods {
		ops[i] = m.Name()
	}
	return ops
}

// Driver implements load.Scenario.
func (r *Replay) Driver() load.Driver { return load.PerVU }

// Finish implements load.Scenario: the connections' bytes since the last
// Finish, the methods not called dropped, what the schedule skipped.
func (r *Replay) Finish(res *results.Load) {
	r.sched.Close()
	res.Conn = load.ConnResult(r.o.URL, conn.GRPC, "", nil, nil)
	p := r.conns.GRPC
	in, out := p.Bytes.In.Load(), p.Bytes.Out.Load()
	if r.streams != nil {
		in, out = in+r.streams.GRPC.Bytes.In.Load(), out+r.streams.GRPC.Bytes.Out.Load()
	}
	res.Bytes.WireIn += in - r.wireIn
	res.Bytes.WireOut += out - r.wireOut
	r.wireIn, r.wireOut = in, out
	ops := res.Ops[:0]
	for _, op := range res.Ops {
		if op.Requests > 0 {
			ops = append(ops, op)
		}
	}
	res.Ops = ops
	st := r.sched.Stats()
	if st.Malformed > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("replay: %d malformed lines skipped (first: %s)", st.Malformed, strings.Join(st.Examples, "; ")))
	}
	if st.GapsCut > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("replay: %d pauses longer than the bound between recorded calls were cut to it (the longest: %v)", st.GapsCut, st.LongestGap))
	}
	if st.Err != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("replay: reading the recording stopped early: %v", st.Err))
	}
}

// Close stops the schedule's reader and closes the connections.
func (r *Replay) Close() error {
	var err error
	if r.sched != nil {
		err = r.sched.Close()
	}
	r.conns.Close()
	if r.streams != nil {
		r.streams.Close()
	}
	return err
}

// NewVU implements load.Scenario.
func (r *Replay) NewVU(_ context.Context, id int, _ *measure.Bytes) (load.VU, error) {
	v := &replayVU{r: r, cl: r.conns.GRPC.Client(id, r.o.Timeout),
		in: make([]*dynamicpb.Message, len(r.methods)), out: make([]*dynamicpb.Message, len(r.methods))}
	switch {
	case r.streams != nil:
		v.cc = r.streams.GRPC.ClientConn(id)
	default:
		v.cc = r.conns.GRPC.ClientConn(id) // grpc-go's, or nil: no stream to make
	}
	return v, nil
}

type replayVU struct {
	r       *Replay
	cl      *h2.GRPCClient
	cc      *grpc.ClientConn     // streams
	in, out []*dynamicpb.Message // by operation, made on first use
	msgs    []*dynamicpb.Message // a call's recorded messages (messages)
	req     []byte
	md      [][2]string // the metadata set on cl
	smd     metadata.MD // the same, for a stream's context
	next    [][2]string // this call's
}

func (v *replayVU) Close() error {
	v.cl.Close()
	return nil
}

// Do implements load.VU: the call the schedule holds for this hit.
func (v *replayVU) Do(ctx context.Context, o *load.Outcome) {
	it, ok := v.r.sched.Take(o.Hit)
	if !ok {
		o.Fail = "replay: no call scheduled"
		return
	}
	o.Op = it.Op
	q := &it.Req
	m := v.r.methods[it.Op]
	if v.in[it.Op] == nil {
		v.in[it.Op], v.out[it.Op] = dynamicpb.NewMessage(m.Desc.Input()), dynamicpb.NewMessage(m.Desc.Output())
	}
	in, out := v.in[it.Op], v.out[it.Op]
	// The call's own metadata, then -H's; set when it changes.
	v.next = append(append(v.next[:0], q.Header...), v.r.md...)
	if !slices.Equal(v.next, v.md) {
		v.md = append(v.md[:0], v.next...)
		v.cl.SetMetadata(slices.Clone(v.md))
		v.smd = metadata.MD{}
		for _, kv := range v.md {
			v.smd.Append(kv[0], kv[1])
		}
	}
	ctx = v.cl.CallCtx(ctx)
	var err error
	switch {
	case q.Method == replay.GRPCProto && v.cl.Lean() && m.Kind() == KindUnary:
		v.req = append(v.req[:0], 0, 0, 0, 0, 0)
		binary.BigEndian.PutUint32(v.req[1:5], uint32(len(q.Body)))
		v.req = append(v.req, q.Body...)
		err = v.cl.InvokeEncoded(ctx, m.Path, v.req, out)
	default:
		var msgs []*dynamicpb.Message
		msgs, err = v.messages(q, m, in)
		if err != nil {
			o.Fail = "request: " + err.Error()
			return
		}
		if m.Kind() != KindUnary {
			v.stream(ctx, o, q, m, msgs, out)
			return
		}
		in = msgs[0]
		if v.cl.Lean() {
			if v.req, err = h2.AppendGRPCMessage(v.req[:0], in); err == nil {
				err = v.cl.InvokeEncoded(ctx, m.Path, v.req, out)
			}
		} else {
			err = v.cl.Invoke(ctx, m.Path, in, out)
		}
	}
	o.BodyOut, o.BodyIn = v.cl.Sizes()
	v.status(ctx, o, err, q.Status)
}

// errMessages is a call whose recorded messages are not what its method
// sends: one for a unary call or a server stream.
var errMessages = errors.New("messages for a method that sends one")

// messages decodes a call's recorded request messages, the first into
// first (the VU's own for the method, reused: a unary call allocates
// none); an error names what does not fit.
func (v *replayVU) messages(q *reqlog.Request, m *Method, first *dynamicpb.Message) ([]*dynamicpb.Message, error) {
	clear(v.msgs)
	v.msgs = v.msgs[:0]
	next := func() *dynamicpb.Message {
		msg := first
		if len(v.msgs) == 0 {
			first.Reset()
		} else {
			msg = dynamicpb.NewMessage(m.Desc.Input())
		}
		v.msgs = append(v.msgs, msg)
		return msg
	}
	var err error
	switch q.Method {
	case replay.GRPCProto:
		err = proto.Unmarshal(q.Body, next())
	case replay.GRPCProtoMsgs:
		err = replay.GRPCFrames(q.Body, func(b []byte) error { return proto.Unmarshal(b, next()) })
	case replay.GRPCJSONMsgs:
		var raw []json.RawMessage
		if err = json.Unmarshal(q.Body, &raw); err == nil {
			for _, b := range raw {
				if err = v.r.un.Unmarshal(b, next()); err != nil {
					break
				}
			}
		}
	default:
		err = v.r.un.Unmarshal(q.Body, next())
	}
	switch {
	case err != nil:
		return nil, fmt.Errorf("does not fit %s", m.Desc.Input().FullName())
	case len(v.msgs) != 1 && !m.Desc.IsStreamingClient():
		return nil, fmt.Errorf("%d %w", len(v.msgs), errMessages)
	}
	return v.msgs, nil
}

// stream replays one call of a streaming method on grpc-go: its recorded
// messages (a bidi stream's while the replies are read), then every reply
// until the server ends the call, whose status is checked against the
// recorded one.
func (v *replayVU) stream(ctx context.Context, o *load.Outcome, q *reqlog.Request, m *Method, msgs []*dynamicpb.Message, out *dynamicpb.Message) {
	d := m.Desc
	ctx, cancel := context.WithCancel(ctx) // ends a call abandoned half-way
	defer cancel()
	if len(v.smd) > 0 {
		ctx = metadata.NewOutgoingContext(ctx, v.smd)
	}
	st, err := v.cc.NewStream(ctx, &grpc.StreamDesc{ServerStreams: d.IsStreamingServer(), ClientStreams: d.IsStreamingClient()}, m.Path)
	if err != nil {
		v.status(ctx, o, err, q.Status)
		return
	}
	sent := make(chan int, 1) // the bytes of the messages sent
	send := func() {
		n := 0
		for _, in := range msgs {
			if st.SendMsg(in) != nil {
				break // the call ended: its status is the receiver's
			}
			n += proto.Size(in)
		}
		st.CloseSend() //nolint:errcheck // as SendMsg's
		sent <- n
	}
	if d.IsStreamingClient() && d.IsStreamingServer() {
		go send() // a bidi server may answer each message as it comes
	} else {
		send()
	}
	in := 0
	for {
		if err = st.RecvMsg(out); err != nil {
			break
		}
		in += proto.Size(out)
		if !d.IsStreamingServer() {
			break // grpc-go read the status after the one reply
		}
	}
	if errors.Is(err, io.EOF) {
		err = nil
	}
	cancel() // a sender still blocked on flow control returns
	o.BodyOut, o.BodyIn = <-sent, in
	v.status(ctx, o, err, q.Status)
}

// status checks a call's code against the recorded one (q.Status is the
// code + 1; 0: OK wanted).
func (v *replayVU) status(ctx context.Context, o *load.Outcome, err error, recorded int) {
	setStatus(ctx, o, err)
	want := codes.OK
	if recorded > 0 {
		want = codes.Code(recorded - 1)
	}
	got := codes.Code(o.Status - load.GRPCStatus(0))
	switch {
	case got == want:
		o.Fail = ""
	case o.Fail == "timeout":
	case recorded > 0:
		o.Fail = "grpc " + got.String() + ", recorded " + want.String()
	}
	if got != want {
		o.BodyIn = 0
	}
}
