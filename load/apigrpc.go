package load

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/pb"
)

// grpcPool is a fixed set of gRPC connections shared by the VUs, VU i
// using connection i mod n: the connection count is explicit, and the
// concurrent streams per connection are VUs/n (recorded in the result's
// configuration). Bytes are counted on the TCP connections beneath gRPC,
// so they include HTTP/2 and gRPC framing; message sizes are the body.
//
// The connections are the lean client's (grpclean.go) unless the client
// is ClientStd, grpc-go's.
type grpcPool struct {
	conns []*grpc.ClientConn // ClientStd
	lean  []*grpcLeanConn    // ClientLean
	bytes measure.Bytes
}

func newGRPCPool(addr string, n int, timeout time.Duration, count bool, client string) (*grpcPool, error) {
	if n <= 0 {
		n = 1
	}
	p := &grpcPool{}
	d := &net.Dialer{Timeout: timeout}
	dial := measure.DialFunc(d.DialContext)
	var counter *measure.Bytes
	if count {
		counter = &p.bytes
	}
	if client != ClientStd {
		dial = rawIODialer(dial, counter) // raw system calls: see rawIODialer
		p.lean = make([]*grpcLeanConn, n)
		for i := range p.lean {
			p.lean[i] = newGRPCLeanConn(addr, dial)
		}
		return p, nil
	}
	if count {
		dial = measure.CountingDialer(dial, counter)
	}
	p.conns = make([]*grpc.ClientConn, n)
	for i := range p.conns {
		c, err := grpc.NewClient("passthrough:///"+addr,
			grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithContextDialer(func(ctx context.Context, a string) (net.Conn, error) { return dial(ctx, "tcp", a) }),
			// A static window turns off grpc-go's BDP estimation, whose
			// PING and ACK per burst of data are frames, writes and
			// wake-ups a load client should not add to each call; 1 MiB
			// is what the reference server's h2c and gRPC windows are.
			grpc.WithInitialWindowSize(grpcWindow),
			grpc.WithInitialConnWindowSize(grpcWindow),
			// (A shared write buffer is grpc-go's default.)
		)
		if err != nil {
			p.close()
			return nil, fmt.Errorf("%w: gRPC client for %s: %v", ErrOptions, addr, err)
		}
		p.conns[i] = c
	}
	return p, nil
}

// grpcWindow is the client's flow-control window per stream and per
// connection.
const grpcWindow = 1 << 20

func (p *grpcPool) close() {
	for _, c := range p.conns {
		if c != nil {
			c.Close()
		}
	}
	for _, c := range p.lean {
		c.close()
	}
}

func (p *grpcPool) client(vu int, timeout time.Duration) *grpcClient {
	c := &grpcClient{timeout: timeout}
	if p.lean != nil {
		c.lean = p.lean[vu%len(p.lean)]
		c.call.done = make(chan struct{}, 1)
	} else {
		c.std = p.conns[vu%len(p.conns)]
	}
	return c
}

// grpcClient is one VU's view of the pool.
type grpcClient struct {
	std     *grpc.ClientConn
	lean    *grpcLeanConn
	call    leanCall // the lean client's call state, reused
	req     []byte   // the lean client's request buffer, reused
	timeout time.Duration

	// The last call's message sizes: the lean client has them from the
	// wire (proto.Size, which grpc-go's path needs, was 3-4% of a call's
	// client CPU).
	sizeOut, sizeIn int

	// The calls' timeout context, shared by the VU's successive calls
	// while more than 90% of the timeout is left, as h1.Conn re-arms its
	// deadline: a context, its timer and its place among the parent's
	// children once per tenth of the timeout instead of once per call,
	// and the lean client's reader watches one context (issue 17). A call
	// times out anywhere in [0.9·timeout, timeout].
	tctx, tparent context.Context
	tcancel       context.CancelFunc
	tdeadline     time.Time
}

// callCtx is ctx with the per-call timeout (see tctx).
func (c *grpcClient) callCtx(ctx context.Context) context.Context {
	if c.timeout <= 0 {
		return ctx
	}
	now := time.Now()
	if c.tctx == nil || c.tparent != ctx || c.tdeadline.Sub(now) < c.timeout*9/10 || c.tctx.Err() != nil {
		if c.tcancel != nil {
			c.tcancel()
		}
		c.tdeadline = now.Add(c.timeout)
		c.tctx, c.tcancel = context.WithDeadline(ctx, c.tdeadline)
		c.tparent = ctx
	}
	return c.tctx
}

func (c *grpcClient) close() {
	if c.tcancel != nil {
		c.tcancel()
	}
}

// invoke makes one unary call with either client.
// On success, sizeOut and sizeIn are the messages' sizes.
func (c *grpcClient) invoke(ctx context.Context, method string, in, out proto.Message) error {
	if c.lean == nil {
		err := c.std.Invoke(ctx, method, in, out)
		if err == nil {
			c.sizeOut, c.sizeIn = proto.Size(in), proto.Size(out)
		}
		return err
	}
	var err error
	if c.req, err = appendGRPCMessage(c.req[:0], in); err != nil {
		return err
	}
	if err := c.lean.invoke(ctx, &c.call, method, c.req, out); err != nil {
		return err
	}
	c.sizeOut, c.sizeIn = len(c.req)-5, len(c.call.body)-5 // one message each, after its 5-byte prefix
	return nil
}

// grpcCall runs one unary call with the per-request timeout and fills o.
func grpcCall[Resp proto.Message](ctx context.Context, c *grpcClient, method string, in proto.Message, out Resp, o *Outcome) (Resp, bool) {
	ctx = c.callCtx(ctx)
	err := c.invoke(ctx, method, in, out)
	st, _ := status.FromError(err)
	o.Status = GRPCStatus(uint32(st.Code()))
	if err != nil {
		if c.lean == nil || len(c.req) == 0 {
			o.BodyOut += proto.Size(in)
		} else {
			o.BodyOut += len(c.req) - 5
		}
		o.Fail = "grpc " + st.Code().String()
		if st.Code() == codes.DeadlineExceeded && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			o.Fail = "timeout"
		}
		return out, false
	}
	o.BodyOut += c.sizeOut
	o.BodyIn += c.sizeIn
	return out, true
}

func (c *grpcClient) listUsers(ctx context.Context, out *api.UserList, o *Outcome) bool {
	m, ok := grpcCall(ctx, c, pb.UserService_List_FullMethodName, &pb.ListUsersRequest{}, new(pb.UserList), o)
	if ok {
		pb.ToUserList(m, out)
	}
	return ok
}

func (c *grpcClient) createUser(ctx context.Context, in *encoded[api.User], out *api.User, o *Outcome) bool {
	m, ok := grpcCall(ctx, c, pb.UserService_Create_FullMethodName, pb.FromUser(&in.v), new(pb.User), o)
	if ok {
		pb.ToUser(m, out)
	}
	return ok
}

func (c *grpcClient) getUser(ctx context.Context, id int64, out *api.User, o *Outcome) bool {
	m, ok := grpcCall(ctx, c, pb.UserService_Get_FullMethodName, &pb.GetUserRequest{Id: id}, new(pb.User), o)
	if ok {
		pb.ToUser(m, out)
	}
	return ok
}

func (c *grpcClient) updateUser(ctx context.Context, id int64, in *encoded[api.User], out *api.User, o *Outcome) bool {
	msg := pb.FromUser(&in.v)
	msg.Id = id
	m, ok := grpcCall(ctx, c, pb.UserService_Update_FullMethodName, msg, new(pb.User), o)
	if ok {
		pb.ToUser(m, out)
	}
	return ok
}

func (c *grpcClient) deleteUser(ctx context.Context, id int64, o *Outcome) bool {
	_, ok := grpcCall(ctx, c, pb.UserService_Delete_FullMethodName, &pb.DeleteUserRequest{Id: id}, new(emptypb.Empty), o)
	return ok
}

func (c *grpcClient) echo(ctx context.Context, in *encoded[api.EchoRequest], out *api.EchoResponse, o *Outcome) bool {
	m, ok := grpcCall(ctx, c, pb.EchoService_Echo_FullMethodName, &pb.EchoRequest{FirstMessage: in.v.FirstMessage, SecondMessage: in.v.SecondMessage}, new(pb.EchoResponse), o)
	if ok {
		*out = api.EchoResponse{Message: m.GetMessage()}
	}
	return ok
}
