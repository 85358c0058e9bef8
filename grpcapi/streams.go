package grpcapi

// The streaming RPCs of wirebench.v1: server streaming (UserService.Stream,
// TodoService.Stream), client streaming (CreateMany) and bidirectional
// (EchoService.Chat). Each is written once, against send and receive
// functions, so that the connect-go handlers of package streamapi (gRPC,
// gRPC-Web and Connect on the REST port) run exactly the same code.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/pb"
	"github.com/wirebench/wirebench/store"
)

// MaxCreateMany is the most items one CreateMany call may create; the next
// one ends the call with ResourceExhausted (the items before it stay).
// It bounds how much one call can grow the store, not memory per call:
// items are created as they arrive.
const MaxCreateMany = 100_000

// DefaultMaxStreamDuration bounds a streaming RPC's life (StreamDeadline).
const DefaultMaxStreamDuration = time.Minute

// streamMethods are the full names of the streaming RPCs of wirebench.v1,
// for StreamDeadline: every stream of the generated service descriptions,
// so a new streaming RPC is bounded without a list to update.
var streamMethods = func() map[string]bool {
	m := map[string]bool{}
	for _, sd := range []*grpc.ServiceDesc{&pb.UserService_ServiceDesc, &pb.TodoService_ServiceDesc, &pb.EchoService_ServiceDesc} {
		for _, st := range sd.Streams {
			m["/"+sd.ServiceName+"/"+st.StreamName] = true
		}
	}
	return m
}()

// StreamDeadline returns a tap handle (grpc.InTapHandle) that gives every
// streaming RPC of wirebench.v1 a deadline max from its start; unary RPCs
// keep their context untouched. grpc-go's own Send and Recv wait on the
// stream's context, so at the deadline a reader that stopped reading (a
// Send blocked on flow control) or a client that stopped sending releases
// the handler, which returns DeadlineExceeded. A deadline set in the
// handler instead would not unblock Send: only the stream's context does.
// max <= 0 means DefaultMaxStreamDuration.
func StreamDeadline(max time.Duration) tap.ServerInHandle {
	if max <= 0 {
		max = DefaultMaxStreamDuration
	}
	return func(ctx context.Context, info *tap.Info) (context.Context, error) {
		if !streamMethods[info.FullMethodName] {
			return ctx, nil
		}
		// Cancelling the parent (grpc-go does at the end of the call)
		// also stops the timer; AfterFunc releases the rest.
		ctx, cancel := context.WithTimeout(ctx, max)
		context.AfterFunc(ctx, cancel)
		return ctx, nil
	}
}

// Services returns the wirebench.v1 service implementations on st, for
// transports other than a *grpc.Server (streamapi's connect-go handlers).
func Services(st *store.Memory) (pb.UserServiceServer, pb.TodoServiceServer, pb.EchoServiceServer) {
	return users{st: st}, todos{st: st}, echo{}
}

// CodeOf maps an API error to its gRPC code: the one table every
// transport uses.
func CodeOf(err error) codes.Code { return codeOf(err) }

func (s users) Stream(_ *pb.ListUsersRequest, ss grpc.ServerStreamingServer[pb.User]) error {
	var buf *pb.UserBuf
	if s.reuse {
		buf = new(pb.UserBuf)
	}
	return sendUsers(ss.Context(), s.st, ss.Send, buf)
}

func (s users) CreateMany(ss grpc.ClientStreamingServer[pb.User, pb.CreateManyReply]) error {
	n, err := CreateUsers(s.st, func() (*pb.User, error) { return recv[pb.User](ss) })
	if err != nil {
		return err
	}
	return ss.SendAndClose(&pb.CreateManyReply{Created: n})
}

func (s todos) Stream(_ *pb.ListTodosRequest, ss grpc.ServerStreamingServer[pb.Todo]) error {
	var buf *pb.Todo
	if s.reuse {
		buf = new(pb.Todo)
	}
	return sendTodos(ss.Context(), s.st, ss.Send, buf)
}

func (s todos) CreateMany(ss grpc.ClientStreamingServer[pb.Todo, pb.CreateManyReply]) error {
	n, err := CreateTodos(s.st, func() (*pb.Todo, error) { return recv[pb.Todo](ss) })
	if err != nil {
		return err
	}
	return ss.SendAndClose(&pb.CreateManyReply{Created: n})
}

func (echo) Chat(ss grpc.BidiStreamingServer[pb.EchoRequest, pb.EchoResponse]) error {
	return Chat(func() (*pb.EchoRequest, error) { return recv[pb.EchoRequest](ss) }, ss.Send)
}

// recv receives one message through a pendingRequest, so that a message
// that does not decode is InvalidArgument (our table), not grpc-go's
// Internal, as for unary requests (decodeErrors).
func recv[T any](ss grpc.ServerStream) (*T, error) {
	m := new(T)
	p := pendingRequest{msg: m}
	if err := ss.RecvMsg(&p); err != nil {
		return nil, err // io.EOF at the client's end, or the transport's status
	}
	if p.err != nil {
		return nil, statusErr(fmt.Errorf("%w: stream message: %v", api.ErrMalformed, p.err))
	}
	return m, nil
}

// SendUsers sends every user of st's current snapshot, in id order. The
// snapshot is the store's shared immutable list (the one List encodes),
// so a stream holds no copy of it: one message at a time is converted.
// It stops at the first error of send or when ctx ends.
func SendUsers(ctx context.Context, st *store.Memory, send func(*pb.User) error) error {
	return sendUsers(ctx, st, send, nil)
}

// sendUsers is SendUsers, converting each user into buf's one message if
// buf is not nil (a send done with the message when it returns:
// ReuseSentMessages), else into a fresh message each, with its timestamp
// in one allocation (grpc-go: a message must not change after SendMsg).
func sendUsers(ctx context.Context, st *store.Memory, send func(*pb.User) error, buf *pb.UserBuf) error {
	list := st.ListUsers()
	for i := range list {
		if err := ctx.Err(); err != nil {
			return status.Error(codes.DeadlineExceeded, fmt.Sprintf("user stream ended after %d users: %v", i, err))
		}
		var m *pb.User
		if buf != nil {
			m = buf.Set(&list[i])
		} else {
			m = pb.FromUser(&list[i])
		}
		if err := send(m); err != nil {
			return err
		}
	}
	return nil
}

// SendTodos sends every todo of st's current snapshot, in id order.
func SendTodos(ctx context.Context, st *store.Memory, send func(*pb.Todo) error) error {
	return sendTodos(ctx, st, send, nil)
}

// sendTodos is SendTodos, filling buf's one message if buf is not nil, as
// sendUsers does.
func sendTodos(ctx context.Context, st *store.Memory, send func(*pb.Todo) error, buf *pb.Todo) error {
	list := st.ListTodos()
	for i := range list {
		if err := ctx.Err(); err != nil {
			return status.Error(codes.DeadlineExceeded, fmt.Sprintf("todo stream ended after %d todos: %v", i, err))
		}
		t := &list[i]
		m := buf
		if m == nil {
			m = new(pb.Todo)
		}
		m.Id, m.Text, m.Done = t.ID, t.Text, t.Done
		if err := send(m); err != nil {
			return err
		}
	}
	return nil
}

// CreateUsers creates each user recv returns until io.EOF, and returns how
// many it created. An invalid user, the MaxCreateMany+1st user or a failed
// recv ends it with a status error saying how many were created.
func CreateUsers(st *store.Memory, recv func() (*pb.User, error)) (int64, error) {
	return createMany(recv, "user", func(m *pb.User) error {
		var u api.User
		pb.ToUser(m, &u)
		_, err := st.CreateUser(u)
		return err
	})
}

// CreateTodos is CreateUsers for todos.
func CreateTodos(st *store.Memory, recv func() (*pb.Todo, error)) (int64, error) {
	return createMany(recv, "todo", func(m *pb.Todo) error {
		var t api.Todo
		pb.ToTodo(m, &t)
		_, err := st.CreateTodo(t)
		return err
	})
}

func createMany[T any](recv func() (*T, error), what string, create func(*T) error) (int64, error) {
	var n int64
	for {
		m, err := recv()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, withPrefix(err, fmt.Sprintf("%s %d of the stream (%d created)", what, n+1, n))
		}
		if n == MaxCreateMany {
			return n, status.Error(codes.ResourceExhausted, fmt.Sprintf("%s %d of the stream: over %d per call (%d created)", what, n+1, MaxCreateMany, n))
		}
		if err := create(m); err != nil {
			return n, status.Error(codeOf(err), fmt.Sprintf("%s %d of the stream (%d created): %v", what, n+1, n, err))
		}
		n++
	}
}

// Chat answers each request recv returns with its echo, in order, until
// io.EOF. An invalid request ends the chat with InvalidArgument.
func Chat(recv func() (*pb.EchoRequest, error), send func(*pb.EchoResponse) error) error {
	for i := 1; ; i++ {
		m, err := recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return withPrefix(err, fmt.Sprintf("chat message %d", i))
		}
		req := api.EchoRequest{FirstMessage: m.GetFirstMessage(), SecondMessage: m.GetSecondMessage()}
		if err := req.Validate(); err != nil {
			return status.Error(codeOf(err), fmt.Sprintf("chat message %d: %v", i, err))
		}
		if err := send(&pb.EchoResponse{Message: api.Echo(req).Message}); err != nil {
			return err
		}
	}
}

// withPrefix keeps err's gRPC code and puts context before its message.
func withPrefix(err error, prefix string) error {
	s, ok := status.FromError(err)
	if !ok {
		return status.Error(codes.Unknown, prefix+": "+err.Error())
	}
	return status.Error(s.Code(), prefix+": "+s.Message())
}
