package grpcany

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"connectrpc.com/connect"
	"golang.org/x/net/http2"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/wire"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// gRPC-Web and Connect run on connect-go's client with dynamic messages
// (WithSchema and a response initializer: no generated code), each VU on
// a connection of its own, as a browser's fetch would be, its bytes split
// by layer (package wire: over TLS, on the bytes inside it). Each carries
// what its protocol can:
//
//   - gRPC-Web: unary and server-streaming methods over HTTP/1.1 (the
//     protocol has no client-to-server stream);
//   - Connect: unary, server- and client-streaming methods over HTTP/1.1
//     (a client stream is a streamed request body, then the reply), and
//     bidi over HTTP/2 — h2c with prior knowledge for http://, h2 by ALPN
//     for https:// — since HTTP/1.1 cannot read a reply while the request
//     is still being sent.

// connectSetup checks what gRPC-Web and Connect can run and resolves the
// target with conn's rule.
func (s *Scenario) connectSetup() error {
	k := s.m.Kind()
	switch {
	case s.o.Protocol == GRPCWeb && (k == KindClientStream || k == KindBidi):
		return fmt.Errorf("%w: --protocol grpc-web carries unary and server-streaming methods only (the protocol has no client stream); %s is %s: use --protocol grpc or connect", ErrOptions, s.m.Name(), k)
	}
	co := s.o.Options
	if !strings.Contains(co.URL, "://") {
		co.URL = "http://" + co.URL
	}
	co.Transport = conn.HTTP1
	c, err := conn.New(co, conn.Speaks{Transports: []string{conn.HTTP1}, Target: "URL"})
	if err != nil {
		return err
	}
	s.conns, s.base = c, c.Target.Scheme+"://"+c.Target.Host
	s.o.Options = c.Options()
	s.layers = new(wire.Counter)
	return nil
}

// connectH2 reports whether the VUs' connections are HTTP/2's: Connect's
// bidi calls.
func (s *Scenario) connectH2() bool { return s.o.Protocol == Connect && s.m.Kind() == KindBidi }

// connectVU makes VU v's connect-go client, dialing through its own
// transport whose bytes count into wireBytes and the layers.
func (s *Scenario) connectVU(v *vu, wireBytes *measure.Bytes) {
	stack := wire.StackH1Enveloped // gRPC-Web, and Connect streams
	if s.o.Protocol == Connect && s.m.Kind() == KindUnary {
		stack = wire.StackH1 // a Connect unary body is the bare message
	}
	alpn := "http/1.1"
	if s.connectH2() {
		stack, alpn = wire.StackH2GRPC, "h2" // enveloped messages in DATA frames
	}
	d := &net.Dialer{Timeout: s.o.Timeout}
	dial := s.connectDialer(d, stack, alpn, wireBytes)
	var hc *http.Client
	if s.connectH2() {
		// x/net's Transport, not net/http's: net/http runs h2 over TLS only
		// on a connection it sees as a *tls.Conn, and the layer counter
		// wraps it; x/net's takes whatever DialTLSContext returns.
		//lint:ignore SA1019 as above
		tr := &http2.Transport{AllowHTTP: true, DialTLSContext: func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
			return dial(ctx, network, addr)
		}}
		hc, v.closeTr = &http.Client{Transport: tr}, tr.CloseIdleConnections //lint:ignore SA1019 as above
	} else {
		tr := &http.Transport{DialContext: dial, DialTLSContext: dial, MaxIdleConnsPerHost: 1}
		hc, v.closeTr = &http.Client{Transport: tr}, tr.CloseIdleConnections
	}
	out := s.m.Desc.Output()
	opts := []connect.ClientOption{
		connect.WithSchema(s.m.Desc),
		connect.WithResponseInitializer(func(_ connect.Spec, msg any) error {
			m, ok := msg.(*dynamicpb.Message)
			if !ok {
				return fmt.Errorf("response %T is not dynamic", msg)
			}
			*m = *dynamicpb.NewMessage(out)
			return nil
		}),
		// No compression: the message layer is then the message, as on
		// native gRPC (connect-go's client accepts gzip by default).
		connect.WithAcceptCompression("gzip", nil, nil),
	}
	if s.o.Protocol == GRPCWeb {
		opts = append(opts, connect.WithGRPCWeb())
	}
	v.cx = connect.NewClient[dynamicpb.Message, dynamicpb.Message](hc, s.base+s.m.Path, opts...)
}

// connectDialer dials a VU's connection: TCP counted into wireBytes, TLS
// over it for https:// (offering alpn), and the layers parsed on the
// bytes above TLS. The TLS records' own bytes are the difference between
// the wire and the layers (Finish puts them in Other).
func (s *Scenario) connectDialer(d *net.Dialer, stack wire.Stack, alpn string, wireBytes *measure.Bytes) measure.DialFunc {
	var cfg *tls.Config
	if s.conns.TLS != nil {
		cfg = conn.WithALPN(s.conns.TLS, alpn)
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if cfg == nil {
			return wire.Conn(c, stack, s.layers, wireBytes), nil
		}
		tc := tls.Client(measure.CountConn(c, wireBytes), cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, fmt.Errorf("TLS handshake with %s: %w", addr, err)
		}
		if p := tc.ConnectionState().NegotiatedProtocol; alpn == "h2" && p != "h2" {
			tc.Close()
			return nil, fmt.Errorf("TLS with %s: the server chose %q by ALPN: Connect's bidi calls need HTTP/2", addr, p)
		}
		return wire.Conn(tc, stack, s.layers, nil), nil
	}
}

// connectDo makes one call over gRPC-Web or Connect.
func (v *vu) connectDo(ctx context.Context, o *load.Outcome) {
	switch v.s.m.Kind() {
	case KindClientStream, KindBidi:
		v.connectStream(ctx, o)
		return
	}
	if err := v.s.reqs.Message(&v.buf, &v.d, v.in); err != nil {
		v.requestFailed(o, err)
		return
	}
	req := connect.NewRequest(v.in)
	for _, kv := range v.s.md {
		req.Header().Add(kv[0], kv[1])
	}
	o.BodyOut = proto.Size(v.in)
	if v.s.m.Kind() == KindUnary {
		resp, err := v.cx.CallUnary(ctx, req)
		if !v.status(ctx, o, err) {
			return
		}
		o.BodyIn = proto.Size(resp.Msg)
		v.check(o, resp.Msg)
		return
	}
	t0 := time.Now()
	st, err := v.cx.CallServerStream(ctx, req)
	if !v.status(ctx, o, err) {
		return
	}
	defer st.Close()
	r := v.replies(t0)
	for st.Receive() {
		if !r.reply(o, st.Msg()) {
			return
		}
	}
	if !v.status(ctx, o, st.Err()) {
		return
	}
	r.done()
}

// replies times a call's replies for the stream section.
type replies struct {
	v        *vu
	t0, prev time.Time
	items    int
	first    time.Duration
}

func (v *vu) replies(t0 time.Time) *replies { return &replies{v: v, t0: t0, prev: t0} }

// reply counts and checks one reply; false when a check failed.
func (r *replies) reply(o *load.Outcome, m *dynamicpb.Message) bool {
	now := time.Now()
	if r.items == 0 {
		r.first = now.Sub(r.t0)
	} else {
		r.v.s.stats.gap(r.v.id, now.Sub(r.prev))
	}
	r.prev = now
	r.items++
	o.BodyIn += proto.Size(m)
	return r.v.check(o, m)
}

func (r *replies) done() { r.v.s.stats.add(r.v.id, r.items, r.first, time.Since(r.t0)) }

// connectStream makes one client-streaming or bidi call over Connect:
// Messages requests, each rendered with its {{.I}}, then (client stream)
// the one reply, or (bidi) every reply, read while the requests go out.
func (v *vu) connectStream(ctx context.Context, o *load.Outcome) {
	t0 := time.Now()
	r := v.replies(t0)
	ctx, cancel := context.WithCancel(ctx) // ends a call abandoned half-way
	defer cancel()
	if v.s.m.Kind() == KindClientStream {
		st := v.cx.CallClientStream(ctx)
		for _, kv := range v.s.md {
			st.RequestHeader().Add(kv[0], kv[1])
		}
		for i := range v.s.o.Messages {
			v.d.I = i
			if err := v.s.reqs.Message(&v.buf, &v.d, v.in); err != nil {
				cancel()
				v.requestFailed(o, err)
				return
			}
			if st.Send(v.in) != nil {
				break // the reply says why
			}
			o.BodyOut += proto.Size(v.in)
		}
		resp, err := st.CloseAndReceive()
		if !v.status(ctx, o, err) {
			return
		}
		if r.reply(o, resp.Msg) {
			r.done()
		}
		return
	}
	st := v.cx.CallBidiStream(ctx)
	for _, kv := range v.s.md {
		st.RequestHeader().Add(kv[0], kv[1])
	}
	sendErr := make(chan error, 1)
	go func() {
		in := dynamicpb.NewMessage(v.s.m.Desc.Input())
		for i := range v.s.o.Messages {
			v.d.I = i
			if err := v.s.reqs.Message(&v.buf, &v.d, in); err != nil {
				cancel() // the server sees the call cancelled, not a short one
				sendErr <- err
				return
			}
			if st.Send(in) != nil {
				break // the receiver reads why
			}
			o.BodyOut += proto.Size(in)
		}
		st.CloseRequest() //nolint:errcheck // as Send's
		sendErr <- nil
	}()
	defer st.CloseResponse() //nolint:errcheck // the call's status is read below
	for {
		msg, err := st.Receive()
		if err != nil {
			if e := <-sendErr; e != nil {
				v.requestFailed(o, e)
				return
			}
			if !isEOF(err) {
				v.status(ctx, o, err)
				return
			}
			break
		}
		if !r.reply(o, msg) {
			cancel()
			<-sendErr
			return
		}
	}
	o.Status = load.GRPCStatus(0)
	r.done()
}

func isEOF(err error) bool { return errors.Is(err, io.EOF) }

// tlsOther puts the TLS records' own bytes (the wire's beyond the layers
// parsed inside TLS) in the layers' Other.
func tlsOther(l *results.Layers, wire int64) {
	if d := wire - l.Total(); d > 0 {
		l.Other += d
	}
}
