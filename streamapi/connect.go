package streamapi

// The wirebench.v1 services on the REST port through connect-go, whose
// handlers speak gRPC (HTTP/2: h2c here), gRPC-Web and the Connect
// protocol (HTTP/1.1 or HTTP/2) at once. Every method calls package
// grpcapi's implementation, so the answers and errors are the gRPC port's.

import (
	"context"
	"errors"
	"io"

	"connectrpc.com/connect"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/wirebench/wirebench/grpcapi"
	"github.com/wirebench/wirebench/pb"
	"github.com/wirebench/wirebench/store"
)

// toConnect turns a gRPC status error into a connect error with the same
// code and message (connect's codes are gRPC's numbers).
func toConnect(err error) error {
	if err == nil {
		return nil
	}
	var ce *connect.Error
	if errors.As(err, &ce) {
		return ce
	}
	s := status.Convert(err)
	return connect.NewError(connect.Code(s.Code()), errors.New(s.Message()))
}

// toStatus is the reverse, for errors connect's streams return to
// grpcapi's loops (which add context and keep the code).
func toStatus(err error) error {
	var ce *connect.Error
	if errors.As(err, &ce) {
		return status.Error(codes.Code(ce.Code()), ce.Message())
	}
	return err
}

func unary[T any](m *T, err error) (*connect.Response[T], error) {
	if err != nil {
		return nil, toConnect(err)
	}
	return connect.NewResponse(m), nil
}

// receiver adapts a connect stream's Receive/Msg/Err to grpcapi's recv.
func receiver[T any](receive func() bool, msg func() *T, errf func() error) func() (*T, error) {
	return func() (*T, error) {
		if receive() {
			return msg(), nil
		}
		if err := errf(); err != nil {
			return nil, toStatus(err)
		}
		return nil, io.EOF
	}
}

type connectUsers struct {
	st *store.Memory
	g  pb.UserServiceServer
}

func (s connectUsers) Create(ctx context.Context, r *connect.Request[pb.User]) (*connect.Response[pb.User], error) {
	return unary(s.g.Create(ctx, r.Msg))
}

func (s connectUsers) Get(ctx context.Context, r *connect.Request[pb.GetUserRequest]) (*connect.Response[pb.User], error) {
	return unary(s.g.Get(ctx, r.Msg))
}

func (s connectUsers) List(ctx context.Context, r *connect.Request[pb.ListUsersRequest]) (*connect.Response[pb.UserList], error) {
	return unary(s.g.List(ctx, r.Msg))
}

func (s connectUsers) Update(ctx context.Context, r *connect.Request[pb.User]) (*connect.Response[pb.User], error) {
	return unary(s.g.Update(ctx, r.Msg))
}

func (s connectUsers) Delete(ctx context.Context, r *connect.Request[pb.DeleteUserRequest]) (*connect.Response[emptypb.Empty], error) {
	return unary(s.g.Delete(ctx, r.Msg))
}

func (s connectUsers) Stream(ctx context.Context, _ *connect.Request[pb.ListUsersRequest], ss *connect.ServerStream[pb.User]) error {
	return toConnect(grpcapi.SendUsers(ctx, s.st, ss.Send))
}

func (s connectUsers) CreateMany(_ context.Context, cs *connect.ClientStream[pb.User]) (*connect.Response[pb.CreateManyReply], error) {
	n, err := grpcapi.CreateUsers(s.st, receiver(cs.Receive, cs.Msg, cs.Err))
	return unary(&pb.CreateManyReply{Created: n}, err)
}

type connectTodos struct {
	st *store.Memory
	g  pb.TodoServiceServer
}

func (s connectTodos) Create(ctx context.Context, r *connect.Request[pb.Todo]) (*connect.Response[pb.Todo], error) {
	return unary(s.g.Create(ctx, r.Msg))
}

func (s connectTodos) Get(ctx context.Context, r *connect.Request[pb.GetTodoRequest]) (*connect.Response[pb.Todo], error) {
	return unary(s.g.Get(ctx, r.Msg))
}

func (s connectTodos) List(ctx context.Context, r *connect.Request[pb.ListTodosRequest]) (*connect.Response[pb.TodoList], error) {
	return unary(s.g.List(ctx, r.Msg))
}

func (s connectTodos) Update(ctx context.Context, r *connect.Request[pb.Todo]) (*connect.Response[pb.Todo], error) {
	return unary(s.g.Update(ctx, r.Msg))
}

func (s connectTodos) Delete(ctx context.Context, r *connect.Request[pb.DeleteTodoRequest]) (*connect.Response[emptypb.Empty], error) {
	return unary(s.g.Delete(ctx, r.Msg))
}

func (s connectTodos) Stream(ctx context.Context, _ *connect.Request[pb.ListTodosRequest], ss *connect.ServerStream[pb.Todo]) error {
	return toConnect(grpcapi.SendTodos(ctx, s.st, ss.Send))
}

func (s connectTodos) CreateMany(_ context.Context, cs *connect.ClientStream[pb.Todo]) (*connect.Response[pb.CreateManyReply], error) {
	n, err := grpcapi.CreateTodos(s.st, receiver(cs.Receive, cs.Msg, cs.Err))
	return unary(&pb.CreateManyReply{Created: n}, err)
}

type connectEcho struct{ g pb.EchoServiceServer }

func (s connectEcho) Echo(ctx context.Context, r *connect.Request[pb.EchoRequest]) (*connect.Response[pb.EchoResponse], error) {
	return unary(s.g.Echo(ctx, r.Msg))
}

func (s connectEcho) Chat(_ context.Context, bs *connect.BidiStream[pb.EchoRequest, pb.EchoResponse]) error {
	return toConnect(grpcapi.Chat(func() (*pb.EchoRequest, error) {
		m, err := bs.Receive()
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		if err != nil {
			return nil, toStatus(err)
		}
		return m, nil
	}, bs.Send))
}
