package scenario

import (
	"context"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/h2"
	"github.com/wirebench/wirebench/load/traceparent"
	"github.com/wirebench/wirebench/pb"
)

// grpcClient is the reference API over one VU's gRPC client (h2's lean
// client or grpc-go): an apiClient.
type grpcClient struct {
	*h2.GRPCClient
	tp *traceparent.Gen // with Options.Traceparent: each call's trace ID
}

func (c grpcClient) close() { c.Close() }

// grpcCall runs one unary call with the per-request timeout and fills o.
func grpcCall[Resp proto.Message](ctx context.Context, c grpcClient, method string, in proto.Message, out Resp, o *load.Outcome) (Resp, bool) {
	ctx = c.CallCtx(ctx)
	if c.tp != nil {
		id, span := c.tp.Next()
		var v [traceparent.Len]byte
		traceparent.Put(v[:], id, span)
		c.SetTraceparent(v[:])
		o.Trace = id
	}
	err := c.Invoke(ctx, method, in, out)
	st, _ := status.FromError(err)
	o.Status = load.GRPCStatus(uint32(st.Code()))
	if err != nil {
		o.BodyOut += c.SentSize(in)
		o.Fail = "grpc " + st.Code().String()
		if st.Code() == codes.DeadlineExceeded && pastDeadline(ctx) {
			o.Fail = "timeout"
		}
		return out, false
	}
	sizeOut, sizeIn := c.Sizes()
	o.BodyOut += sizeOut
	o.BodyIn += sizeIn
	return out, true
}

func (c grpcClient) listUsers(ctx context.Context, out *api.UserList, o *load.Outcome) bool {
	m, ok := grpcCall(ctx, c, pb.UserService_List_FullMethodName, &pb.ListUsersRequest{}, new(pb.UserList), o)
	if ok {
		pb.ToUserList(m, out)
	}
	return ok
}

func (c grpcClient) countUsers(ctx context.Context, o *load.Outcome) (int, bool) {
	m, ok := grpcCall(ctx, c, pb.UserService_List_FullMethodName, &pb.ListUsersRequest{}, new(pb.UserList), o)
	if !ok {
		return 0, false
	}
	return len(m.Users), true
}

func (c grpcClient) createUser(ctx context.Context, in *encoded[api.User], out *api.User, o *load.Outcome) bool {
	m, ok := grpcCall(ctx, c, pb.UserService_Create_FullMethodName, pb.FromUser(&in.v), new(pb.User), o)
	if ok {
		pb.ToUser(m, out)
	}
	return ok
}

func (c grpcClient) getUser(ctx context.Context, id int64, out *api.User, o *load.Outcome) bool {
	m, ok := grpcCall(ctx, c, pb.UserService_Get_FullMethodName, &pb.GetUserRequest{Id: id}, new(pb.User), o)
	if ok {
		pb.ToUser(m, out)
	}
	return ok
}

func (c grpcClient) updateUser(ctx context.Context, id int64, in *encoded[api.User], out *api.User, o *load.Outcome) bool {
	msg := pb.FromUser(&in.v)
	msg.Id = id
	m, ok := grpcCall(ctx, c, pb.UserService_Update_FullMethodName, msg, new(pb.User), o)
	if ok {
		pb.ToUser(m, out)
	}
	return ok
}

func (c grpcClient) deleteUser(ctx context.Context, id int64, o *load.Outcome) bool {
	_, ok := grpcCall(ctx, c, pb.UserService_Delete_FullMethodName, &pb.DeleteUserRequest{Id: id}, new(emptypb.Empty), o)
	return ok
}

func (c grpcClient) echo(ctx context.Context, in *encoded[api.EchoRequest], out *api.EchoResponse, o *load.Outcome) bool {
	m, ok := grpcCall(ctx, c, pb.EchoService_Echo_FullMethodName, &pb.EchoRequest{FirstMessage: in.v.FirstMessage, SecondMessage: in.v.SecondMessage}, new(pb.EchoResponse), o)
	if ok {
		*out = api.EchoResponse{Message: m.GetMessage()}
	}
	return ok
}

// pastDeadline reports whether ctx's deadline has passed: the client's
// own timeout, not a server's DEADLINE_EXCEEDED. Not ctx.Err(): the lean
// client's read deadline is ctx's and may fire before ctx's own timer.
func pastDeadline(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ok && !d.After(time.Now())
}
