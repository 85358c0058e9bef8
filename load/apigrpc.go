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
type grpcPool struct {
	conns []*grpc.ClientConn
	bytes measure.Bytes
}

func newGRPCPool(addr string, n int, timeout time.Duration, count bool) (*grpcPool, error) {
	if n <= 0 {
		n = 1
	}
	p := &grpcPool{conns: make([]*grpc.ClientConn, n)}
	d := &net.Dialer{Timeout: timeout}
	dial := measure.DialFunc(d.DialContext)
	if count {
		dial = measure.CountingDialer(dial, &p.bytes)
	}
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
			grpc.WithSharedWriteBuffer(true),
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
}

func (p *grpcPool) client(vu int, timeout time.Duration) *grpcClient {
	cc := p.conns[vu%len(p.conns)]
	return &grpcClient{
		users: pb.NewUserServiceClient(cc), echoes: pb.NewEchoServiceClient(cc), timeout: timeout,
	}
}

// grpcClient is one VU's view of the pool.
type grpcClient struct {
	users   pb.UserServiceClient
	echoes  pb.EchoServiceClient
	timeout time.Duration
}

func (c *grpcClient) close() {}

// call runs one unary call with the per-request timeout and fills o.
func grpcCall[Req, Resp proto.Message](ctx context.Context, c *grpcClient, fn func(context.Context, Req, ...grpc.CallOption) (Resp, error), in Req, o *Outcome) (Resp, bool) {
	o.BodyOut += proto.Size(in)
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	out, err := fn(ctx, in)
	st, _ := status.FromError(err)
	o.Status = GRPCStatus(uint32(st.Code()))
	if err != nil {
		o.Fail = "grpc " + st.Code().String()
		if st.Code() == codes.DeadlineExceeded && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			o.Fail = "timeout"
		}
		return out, false
	}
	o.BodyIn += proto.Size(out)
	return out, true
}

func (c *grpcClient) listUsers(ctx context.Context, out *api.UserList, o *Outcome) bool {
	m, ok := grpcCall(ctx, c, c.users.List, &pb.ListUsersRequest{}, o)
	if ok {
		pb.ToUserList(m, out)
	}
	return ok
}

func (c *grpcClient) createUser(ctx context.Context, in *encoded[api.User], out *api.User, o *Outcome) bool {
	m, ok := grpcCall(ctx, c, c.users.Create, pb.FromUser(&in.v), o)
	if ok {
		pb.ToUser(m, out)
	}
	return ok
}

func (c *grpcClient) getUser(ctx context.Context, id int64, out *api.User, o *Outcome) bool {
	m, ok := grpcCall(ctx, c, c.users.Get, &pb.GetUserRequest{Id: id}, o)
	if ok {
		pb.ToUser(m, out)
	}
	return ok
}

func (c *grpcClient) updateUser(ctx context.Context, id int64, in *encoded[api.User], out *api.User, o *Outcome) bool {
	msg := pb.FromUser(&in.v)
	msg.Id = id
	m, ok := grpcCall(ctx, c, c.users.Update, msg, o)
	if ok {
		pb.ToUser(m, out)
	}
	return ok
}

func (c *grpcClient) deleteUser(ctx context.Context, id int64, o *Outcome) bool {
	_, ok := grpcCall[*pb.DeleteUserRequest, *emptypb.Empty](ctx, c, c.users.Delete, &pb.DeleteUserRequest{Id: id}, o)
	return ok
}

func (c *grpcClient) echo(ctx context.Context, in *encoded[api.EchoRequest], out *api.EchoResponse, o *Outcome) bool {
	m, ok := grpcCall(ctx, c, c.echoes.Echo, &pb.EchoRequest{FirstMessage: in.v.FirstMessage, SecondMessage: in.v.SecondMessage}, o)
	if ok {
		*out = api.EchoResponse{Message: m.GetMessage()}
	}
	return ok
}
