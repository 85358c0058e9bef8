package grpcany

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/wire"
	"github.com/wirebench/wirebench/measure"
)

// gRPC-Web and Connect run on connect-go's client with dynamic messages
// (WithSchema and a response initializer: no generated code), each VU on
// an HTTP/1.1 connection of its own, as a browser's fetch would be, its
// bytes split by layer (package wire). They carry what a browser's
// protocols carry: unary and server-streaming methods.

// connectSetup checks what gRPC-Web and Connect can run and resolves the
// target with conn's rule (http:// only: the layers are parsed on the
// socket's bytes, which TLS would hide).
func (s *Scenario) connectSetup() error {
	if k := s.m.Kind(); k != KindUnary && k != KindServerStream {
		return fmt.Errorf("%w: --protocol %s carries unary and server-streaming methods (as browsers do); %s is %s: use --protocol grpc", ErrOptions, s.o.Protocol, s.m.Name(), k)
	}
	co := s.o.Options
	if !strings.Contains(co.URL, "://") {
		co.URL = "http://" + co.URL
	}
	if strings.HasPrefix(co.URL, "https://") {
		return fmt.Errorf("%w: --protocol %s runs over http:// here (HTTP/1.1; no TLS yet)", ErrOptions, s.o.Protocol)
	}
	co.Transport = conn.HTTP1
	c, err := conn.New(co, conn.Speaks{Transports: []string{conn.HTTP1}, Target: "URL"})
	if err != nil {
		return err
	}
	s.conns, s.base = c, "http://"+c.Target.Host
	s.o.Options = c.Options()
	s.layers = new(wire.Counter)
	return nil
}

// connectVU makes VU v's connect-go client, dialing through its own
// transport whose bytes count into wireBytes and the layers.
func (s *Scenario) connectVU(v *vu, wireBytes *measure.Bytes) {
	stack := wire.StackH1Enveloped // gRPC-Web, and Connect streams
	if s.o.Protocol == Connect && s.m.Kind() == KindUnary {
		stack = wire.StackH1 // a Connect unary body is the bare message
	}
	d := &net.Dialer{Timeout: s.o.Timeout}
	tr := &http.Transport{DialContext: wire.Dialer(d.DialContext, stack, s.layers, wireBytes), MaxIdleConnsPerHost: 1}
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
	v.cx = connect.NewClient[dynamicpb.Message, dynamicpb.Message](&http.Client{Transport: tr}, s.base+s.m.Path, opts...)
	v.closeTr = tr.CloseIdleConnections
}

// connectDo makes one call over gRPC-Web or Connect.
func (v *vu) connectDo(ctx context.Context, o *load.Outcome) {
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
	var items int
	var first time.Duration
	prev := t0
	for st.Receive() {
		now := time.Now()
		if items == 0 {
			first = now.Sub(t0)
		} else {
			v.s.stats.gap(v.id, now.Sub(prev))
		}
		prev = now
		items++
		o.BodyIn += proto.Size(st.Msg())
		if !v.check(o, st.Msg()) {
			return
		}
	}
	if !v.status(ctx, o, st.Err()) {
		return
	}
	v.s.stats.add(v.id, items, first, time.Since(t0))
}
