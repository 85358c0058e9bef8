// Package grpcapi is the reference API over gRPC: the services of package
// wirebench.v1 on the shared store, with server reflection and the standard
// health service so that grpcurl and ghz work unmodified.
package grpcapi

import (
	"context"
	"errors"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/h2grpc"
	"github.com/wirebench/wirebench/pb"
	"github.com/wirebench/wirebench/store"
)

// NewServer returns a gRPC server with ServerCodec and opts, serving the
// wirebench.v1 services on st, reflection and health. With
// ReuseSentMessages among opts its streams send one refilled message each.
func NewServer(st *store.Memory, opts ...grpc.ServerOption) *grpc.Server {
	s := grpc.NewServer(append([]grpc.ServerOption{ServerCodec()}, opts...)...)
	reuse := false
	for _, o := range opts {
		if _, ok := o.(reuseOption); ok {
			reuse = !grpc.EnableTracing
		}
	}
	register(s, st, reuse)
	return s
}

// ReuseSentMessages is an option for NewServer (grpc-go ignores it) by
// which its caller promises that nothing on the server keeps a message
// once SendMsg has returned: no stats handler (grpc.StatsHandler: its
// OutPayload carries the message, to be used at any time), no stream
// interceptor that holds one. grpc-go's SendMsg is done with the message
// when it returns (it marshals it before it queues the bytes), so the user
// and todo streams then fill one message a stream again and again instead
// of allocating one a message: a stream of 1,000 users allocates 144 kB
// less, and the server runs fewer GC cycles (docs/grpc.md). With
// grpc.EnableTracing (x/net/trace formats logged messages lazily) it is
// ignored. Without it, or through Register on a *grpc.Server of the
// caller's, every message is fresh, as grpc-go's SendMsg asks.
func ReuseSentMessages() grpc.ServerOption { return reuseOption{} }

type reuseOption struct{ grpc.EmptyServerOption }

// NewLean returns our own transport (package h2grpc: a unary call is
// answered on its connection's goroutine) serving what NewServer serves,
// with ServerCodec's decoding.
func NewLean(st *store.Memory, opts h2grpc.Options) *h2grpc.Server {
	opts.Codec = serverCodec{}
	s := h2grpc.New(opts)
	Register(s, st)
	return s
}

// Registrar is a server to register services on: a *grpc.Server or an
// *h2grpc.Server. Server reflection lists its services.
type Registrar interface {
	grpc.ServiceRegistrar
	GetServiceInfo() map[string]grpc.ServiceInfo
}

// Register adds the wirebench.v1 services, reflection and health (serving)
// to s. With ServerCodec (NewServer installs it) a malformed request is
// InvalidArgument, as our error table says; without it, grpc-go's Internal.
//
// On an *h2grpc.Server the streams reuse their message (see
// ReuseSentMessages): its SendMsg copies the encoded message before it
// returns, and it has no stats handlers or interceptors to keep one.
func Register(s Registrar, st *store.Memory) { register(s, st, reuses(s)) }

// reuses reports whether s is done with a sent message when SendMsg returns
// whatever it was built with (an *h2grpc.Server).
func reuses(s Registrar) bool {
	_, lean := s.(*h2grpc.Server)
	return lean
}

func register(s Registrar, st *store.Memory, reuse bool) {
	s.RegisterService(decodeErrors(&pb.UserService_ServiceDesc), users{st: st, reuse: reuse})
	s.RegisterService(decodeErrors(&pb.TodoService_ServiceDesc), todos{st: st, reuse: reuse})
	s.RegisterService(decodeErrors(&pb.EchoService_ServiceDesc), echo{})
	hs := health.NewServer()
	for _, name := range []string{"", pb.UserService_ServiceDesc.ServiceName, pb.TodoService_ServiceDesc.ServiceName, pb.EchoService_ServiceDesc.ServiceName} {
		hs.SetServingStatus(name, healthpb.HealthCheckResponse_SERVING)
	}
	healthpb.RegisterHealthServer(s, hs)
	registerReflection(s)
}

// codeOf is the one table from API errors to gRPC status codes.
func codeOf(err error) codes.Code {
	switch {
	case errors.Is(err, api.ErrNotFound):
		return codes.NotFound
	case errors.Is(err, api.ErrInvalid), errors.Is(err, api.ErrMalformed):
		return codes.InvalidArgument
	case errors.Is(err, api.ErrTooLarge):
		return codes.ResourceExhausted
	case errors.Is(err, api.ErrUnsupportedType), errors.Is(err, api.ErrNotAcceptable), errors.Is(err, api.ErrMethod):
		return codes.Unimplemented
	case errors.Is(err, api.ErrTimeout):
		return codes.DeadlineExceeded
	case errors.Is(err, api.ErrUnavailable):
		return codes.Unavailable
	default:
		return codes.Internal
	}
}

func statusErr(err error) error { return status.Error(codeOf(err), err.Error()) }

type users struct {
	pb.UnimplementedUserServiceServer
	st    *store.Memory
	reuse bool // Stream refills one message (ReuseSentMessages)
}

func (s users) Create(_ context.Context, m *pb.User) (*pb.User, error) {
	var u api.User
	pb.ToUser(m, &u)
	u, err := s.st.CreateUser(u)
	if err != nil {
		return nil, statusErr(err)
	}
	return pb.FromUser(&u), nil
}

func (s users) Get(_ context.Context, m *pb.GetUserRequest) (*pb.User, error) {
	u, err := s.st.GetUser(m.GetId())
	if err != nil {
		return nil, statusErr(err)
	}
	return pb.FromUser(&u), nil
}

func (s users) List(context.Context, *pb.ListUsersRequest) (*pb.UserList, error) {
	return pb.FromUserList(&api.UserList{Users: s.st.ListUsers()}), nil
}

func (s users) Update(_ context.Context, m *pb.User) (*pb.User, error) {
	var u api.User
	pb.ToUser(m, &u)
	u, err := s.st.UpdateUser(m.GetId(), u)
	if err != nil {
		return nil, statusErr(err)
	}
	return pb.FromUser(&u), nil
}

func (s users) Delete(_ context.Context, m *pb.DeleteUserRequest) (*emptypb.Empty, error) {
	if err := s.st.DeleteUser(m.GetId()); err != nil {
		return nil, statusErr(err)
	}
	return &emptypb.Empty{}, nil
}

type todos struct {
	pb.UnimplementedTodoServiceServer
	st    *store.Memory
	reuse bool // Stream refills one message (ReuseSentMessages)
}

func (s todos) Create(_ context.Context, m *pb.Todo) (*pb.Todo, error) {
	var t api.Todo
	pb.ToTodo(m, &t)
	t, err := s.st.CreateTodo(t)
	if err != nil {
		return nil, statusErr(err)
	}
	return pb.FromTodo(&t), nil
}

func (s todos) Get(_ context.Context, m *pb.GetTodoRequest) (*pb.Todo, error) {
	t, err := s.st.GetTodo(m.GetId())
	if err != nil {
		return nil, statusErr(err)
	}
	return pb.FromTodo(&t), nil
}

func (s todos) List(context.Context, *pb.ListTodosRequest) (*pb.TodoList, error) {
	return pb.FromTodoList(&api.TodoList{Todos: s.st.ListTodos()}), nil
}

func (s todos) Update(_ context.Context, m *pb.Todo) (*pb.Todo, error) {
	var t api.Todo
	pb.ToTodo(m, &t)
	t, err := s.st.UpdateTodo(m.GetId(), t)
	if err != nil {
		return nil, statusErr(err)
	}
	return pb.FromTodo(&t), nil
}

func (s todos) Delete(_ context.Context, m *pb.DeleteTodoRequest) (*emptypb.Empty, error) {
	if err := s.st.DeleteTodo(m.GetId()); err != nil {
		return nil, statusErr(err)
	}
	return &emptypb.Empty{}, nil
}

type echo struct {
	pb.UnimplementedEchoServiceServer
}

func (echo) Echo(_ context.Context, m *pb.EchoRequest) (*pb.EchoResponse, error) {
	req := api.EchoRequest{FirstMessage: m.GetFirstMessage(), SecondMessage: m.GetSecondMessage()}
	if err := req.Validate(); err != nil {
		return nil, statusErr(err)
	}
	return &pb.EchoResponse{Message: api.Echo(req).Message}, nil
}
