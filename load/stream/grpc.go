package stream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"connectrpc.com/connect"
	"github.com/coder/websocket"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/wire"
	"github.com/wirebench/wirebench/pb"
	"github.com/wirebench/wirebench/pb/pbconnect"
)

// The gRPC kinds share one connection (as the unary gRPC cells do): native
// on the gRPC port, or tunnelled through one WebSocket to /grpc-ws on the
// REST port (GoGRPCBridge's design: the WebSocket carries the raw bytes of
// the HTTP/2 connection; the client side is the same as grpcws.Dial's, with
// a counting dialer beneath).

// grpcShared is the connection of a gRPC kind.
func (s *streamScenario) grpcConn() (*grpc.ClientConn, error) {
	s.sharedOnce.Do(func() {
		d := &net.Dialer{Timeout: s.o.Timeout}
		var dialer func(context.Context, string) (net.Conn, error)
		target := s.o.GRPC
		switch s.o.Kind {
		case TunnelGet, TunnelSrv:
			hc := &http.Client{Transport: &http.Transport{
				DialContext: wire.Dialer(d.DialContext, wire.StackWSH2GRPC, &s.layers, &s.raw), ForceAttemptHTTP2: false,
			}}
			u := "ws://" + s.host + "/grpc-ws"
			target = s.host
			dialer = func(ctx context.Context, _ string) (net.Conn, error) {
				c, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: hc})
				if err != nil {
					return nil, fmt.Errorf("tunnel %s: %w", u, err)
				}
				if resp != nil && resp.Body != nil {
					resp.Body.Close()
				}
				c.SetReadLimit(-1) // gRPC bounds its own messages
				return websocket.NetConn(context.Background(), c, websocket.MessageBinary), nil
			}
		default:
			dial := wire.Dialer(d.DialContext, wire.StackH2GRPC, &s.layers, &s.raw)
			dialer = func(ctx context.Context, a string) (net.Conn, error) { return dial(ctx, "tcp", a) }
		}
		cc, err := grpc.NewClient("passthrough:///"+target,
			grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithContextDialer(dialer))
		if err != nil {
			s.sharedErr = fmt.Errorf("%w: gRPC client for %s: %v", load.ErrOptions, target, err)
			return
		}
		s.shared = cc
		s.closers = append(s.closers, func() { cc.Close() })
	})
	if s.sharedErr != nil {
		return nil, s.sharedErr
	}
	return s.shared.(*grpc.ClientConn), nil
}

func grpcFail(o *load.Outcome, err error) bool {
	st, _ := status.FromError(err)
	o.Status = load.GRPCStatus(uint32(st.Code()))
	o.Fail = "grpc " + st.Code().String()
	return false
}

// grpcDo runs one exchange of a gRPC kind.
func (v *streamVU) grpcDo(ctx context.Context, o *load.Outcome, t0 time.Time) (items int, first, last time.Duration, ok bool) {
	cc, err := v.s.grpcConn()
	if err != nil {
		o.Fail = "dial: " + err.Error()
		return 0, 0, 0, false
	}
	users := pb.NewUserServiceClient(cc)
	switch v.s.o.Kind {
	case GRPCGet, TunnelGet:
		req := &pb.GetUserRequest{Id: v.nextID()}
		u, err := users.Get(ctx, req)
		if err != nil {
			return 0, 0, 0, grpcFail(o, err)
		}
		o.BodyOut, o.BodyIn = proto.Size(req), proto.Size(u)
		if u.GetId() != req.Id {
			o.Fail = "check: wrong user"
			return 0, 0, 0, false
		}
		d := time.Since(t0)
		return 1, d, d, true
	case GRPCServer, TunnelSrv:
		st, err := users.Stream(ctx, &pb.ListUsersRequest{})
		if err != nil {
			return 0, 0, 0, grpcFail(o, err)
		}
		var prev time.Duration
		var lastID int64
		for {
			u, err := st.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return items, first, 0, grpcFail(o, err)
			}
			now := time.Since(t0)
			if items == 0 {
				first = now
			} else {
				v.gap(prev, now)
			}
			prev = now
			if u.GetId() <= lastID || u.GetEmail() == "" {
				o.Fail = "check: users out of order or empty"
				return items, first, 0, false
			}
			lastID = u.GetId()
			o.BodyIn += proto.Size(u)
			items++
		}
		o.Status = load.GRPCStatus(0)
		return items, first, time.Since(t0), v.checkCount(o, items)
	case GRPCClient:
		st, err := users.CreateMany(ctx)
		if err != nil {
			return 0, 0, 0, grpcFail(o, err)
		}
		prev := time.Duration(0)
		for i := range v.s.o.Messages {
			u := &pb.User{Name: fmt.Sprintf("bulk %d", i), Email: fmt.Sprintf("bulk%d@example.com", i)}
			if err := st.Send(u); err != nil {
				return i, 0, 0, grpcFail(o, err)
			}
			now := time.Since(t0)
			if i == 0 {
				first = now
			} else {
				v.gap(prev, now)
			}
			prev = now
			o.BodyOut += proto.Size(u)
		}
		r, err := st.CloseAndRecv()
		if err != nil {
			return 0, 0, 0, grpcFail(o, err)
		}
		o.Status = load.GRPCStatus(0)
		if r.GetCreated() != int64(v.s.o.Messages) {
			o.Fail = "check: created count"
			return 0, 0, 0, false
		}
		return v.s.o.Messages, first, time.Since(t0), true
	case GRPCBidi:
		st, err := pb.NewEchoServiceClient(cc).Chat(ctx)
		if err != nil {
			return 0, 0, 0, grpcFail(o, err)
		}
		for i := range v.s.o.Messages {
			req := &pb.EchoRequest{FirstMessage: "message ", SecondMessage: fmt.Sprint(i)}
			sent := time.Now()
			if err := st.Send(req); err != nil {
				return i, first, 0, grpcFail(o, err)
			}
			r, err := st.Recv()
			if err != nil {
				return i, first, 0, grpcFail(o, err)
			}
			v.perMessage(time.Since(sent))
			if i == 0 {
				first = time.Since(t0)
			}
			o.BodyOut += proto.Size(req)
			o.BodyIn += proto.Size(r)
			if r.GetMessage() != req.FirstMessage+req.SecondMessage {
				o.Fail = "check: wrong echo"
				return i, first, 0, false
			}
		}
		if err := st.CloseSend(); err != nil {
			return 0, 0, 0, grpcFail(o, err)
		}
		if _, err := st.Recv(); !errors.Is(err, io.EOF) {
			return 0, 0, 0, grpcFail(o, err)
		}
		o.Status = load.GRPCStatus(0)
		return v.s.o.Messages, first, time.Since(t0), true
	}
	return 0, 0, 0, false
}

// checkCount compares a list's length with the first complete one's: the
// scenarios leave the dataset as they found it, so every list has the same
// length.
func (v *streamVU) checkCount(o *load.Outcome, items int) bool {
	v.s.mu.Lock()
	defer v.s.mu.Unlock()
	if v.s.expect == 0 {
		v.s.expect = items
	}
	if items != v.s.expect || items == 0 {
		o.Fail = "check: list length"
		return false
	}
	return true
}

// connectClient is a VU's Connect or gRPC-Web client: its own HTTP/1.1
// connection (as a browser's fetch would use), counted by layer.
func (v *streamVU) connectClient() pbconnect.UserServiceClient {
	if c, ok := v.conn.(pbconnect.UserServiceClient); ok {
		return c
	}
	stack := wire.StackH1Enveloped // gRPC-Web, and Connect streams
	// no compression: the message layer is then the message, as on
	// native gRPC (connect-go's client accepts gzip by default)
	opts := []connect.ClientOption{connect.WithAcceptCompression("gzip", nil, nil)}
	switch v.s.o.Kind {
	case GRPCWebGet, GRPCWebSrv:
		opts = append(opts, connect.WithGRPCWeb())
	case ConnectGet:
		stack = wire.StackH1 // a Connect unary body is the bare message
	}
	d := &net.Dialer{Timeout: v.s.o.Timeout}
	tr := &http.Transport{DialContext: wire.Dialer(d.DialContext, stack, &v.s.layers, v.wire), MaxIdleConnsPerHost: 1}
	v.closer = tr.CloseIdleConnections
	c := pbconnect.NewUserServiceClient(&http.Client{Transport: tr}, "http://"+v.s.host, opts...)
	v.conn = c
	return c
}

func connectFail(o *load.Outcome, err error) bool {
	o.Fail = "connect " + connect.CodeOf(err).String()
	o.Status = load.GRPCStatus(uint32(connect.CodeOf(err)))
	return false
}

// connectDo runs one exchange over Connect or gRPC-Web.
func (v *streamVU) connectDo(ctx context.Context, o *load.Outcome, t0 time.Time) (items int, first, last time.Duration, ok bool) {
	c := v.connectClient()
	switch v.s.o.Kind {
	case ConnectGet, GRPCWebGet:
		req := &pb.GetUserRequest{Id: v.nextID()}
		r, err := c.Get(ctx, connect.NewRequest(req))
		if err != nil {
			return 0, 0, 0, connectFail(o, err)
		}
		o.Status = load.GRPCStatus(0)
		o.BodyOut, o.BodyIn = proto.Size(req), proto.Size(r.Msg)
		if r.Msg.GetId() != req.Id {
			o.Fail = "check: wrong user"
			return 0, 0, 0, false
		}
		d := time.Since(t0)
		return 1, d, d, true
	default:
		st, err := c.Stream(ctx, connect.NewRequest(&pb.ListUsersRequest{}))
		if err != nil {
			return 0, 0, 0, connectFail(o, err)
		}
		defer st.Close()
		var prev time.Duration
		var lastID int64
		for st.Receive() {
			u := st.Msg()
			now := time.Since(t0)
			if items == 0 {
				first = now
			} else {
				v.gap(prev, now)
			}
			prev = now
			if u.GetId() <= lastID {
				o.Fail = "check: users out of order"
				return items, first, 0, false
			}
			lastID = u.GetId()
			o.BodyIn += proto.Size(u)
			items++
		}
		if err := st.Err(); err != nil {
			return items, first, 0, connectFail(o, err)
		}
		o.Status = load.GRPCStatus(0)
		return items, first, time.Since(t0), v.checkCount(o, items)
	}
}

// grpcNewConnDo makes one Get on a connection of its own, closed after.
func (v *streamVU) grpcNewConnDo(ctx context.Context, o *load.Outcome, t0 time.Time) (items int, first, last time.Duration, ok bool) {
	d := &net.Dialer{Timeout: v.s.o.Timeout}
	dial := wire.Dialer(d.DialContext, wire.StackH2GRPC, &v.s.layers, v.wire)
	cc, err := grpc.NewClient("passthrough:///"+v.s.o.GRPC,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, a string) (net.Conn, error) { return dial(ctx, "tcp", a) }))
	if err != nil {
		o.Fail = "dial: " + err.Error()
		return 0, 0, 0, false
	}
	defer cc.Close()
	req := &pb.GetUserRequest{Id: v.nextID()}
	u, err := pb.NewUserServiceClient(cc).Get(ctx, req)
	if err != nil {
		return 0, 0, 0, grpcFail(o, err)
	}
	o.Status = load.GRPCStatus(0)
	o.BodyOut, o.BodyIn = proto.Size(req), proto.Size(u)
	if u.GetId() != req.Id {
		o.Fail = "check: wrong user"
		return 0, 0, 0, false
	}
	d1 := time.Since(t0)
	return 1, d1, d1, true
}
