package grpcapi_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/wirebench/wirebench/grpcapi"
	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/pb"
	"github.com/wirebench/wirebench/server"
)

func dialWith(t *testing.T, o server.Options) (*server.Server, *grpc.ClientConn) {
	t.Helper()
	o.HTTPAddr, o.GRPCAddr, o.NoHTTP, o.GRPCTransport = "127.0.0.1:0", "127.0.0.1:0", true, *transport
	srv, err := server.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	conn, err := grpc.NewClient(srv.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return srv, conn
}

func TestServerStreamSendsEveryUserInOrder(t *testing.T) {
	srv, conn := dialWith(t, server.Options{SeedUsers: 1000, SeedTodos: 1000})
	ctx := ctx(t)
	st, err := pb.NewUserServiceClient(conn).Stream(ctx, &pb.ListUsersRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := srv.Store.ListUsers()
	for i := range want {
		m, err := st.Recv()
		if err != nil {
			t.Fatalf("user %d: %v", i+1, err)
		}
		if m.Id != want[i].ID || m.Name != want[i].Name || m.Email != want[i].Email || !m.CreatedAt.AsTime().Equal(want[i].CreatedAt) {
			t.Fatalf("user %d = %v, want %+v", i+1, m, want[i])
		}
	}
	if m, err := st.Recv(); !errors.Is(err, io.EOF) {
		t.Fatalf("after %d users: %v, %v; want io.EOF", len(want), m, err)
	}

	ts, err := pb.NewTodoServiceClient(conn).Stream(ctx, &pb.ListTodosRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for {
		m, err := ts.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.Id)
	}
	if len(ids) != 1000 || !slices.IsSorted(ids) {
		t.Fatalf("got %d todos (sorted: %v), want 1000 in id order", len(ids), slices.IsSorted(ids))
	}
}

func TestClientStreamCreatesAndCounts(t *testing.T) {
	srv, conn := dialWith(t, server.Options{})
	ctx := ctx(t)
	cs, err := pb.NewUserServiceClient(conn).CreateMany(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 250 {
		if err := cs.Send(&pb.User{Name: fmt.Sprint("u", i), Email: fmt.Sprintf("u%d@example.com", i)}); err != nil {
			t.Fatal(err)
		}
	}
	r, err := cs.CloseAndRecv()
	if err != nil || r.Created != 250 {
		t.Fatalf("CreateMany = %v, %v; want 250 created", r, err)
	}
	if u, _ := srv.Store.Len(); u != 250 {
		t.Fatalf("store holds %d users, want 250", u)
	}

	tc, err := pb.NewTodoServiceClient(conn).CreateMany(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 7 {
		if err := tc.Send(&pb.Todo{Text: fmt.Sprint("t", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if r, err := tc.CloseAndRecv(); err != nil || r.Created != 7 {
		t.Fatalf("todos CreateMany = %v, %v; want 7", r, err)
	}
}

func TestClientStreamStopsAtInvalidItem(t *testing.T) {
	srv, conn := dialWith(t, server.Options{})
	cs, err := pb.NewUserServiceClient(conn).CreateMany(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	_ = cs.Send(&pb.User{Name: "a", Email: "a@example.com"})
	_ = cs.Send(&pb.User{Name: "b", Email: "not an email"})
	_, err = cs.CloseAndRecv()
	wantCode(t, err, codes.InvalidArgument)
	if !strings.Contains(err.Error(), "user 2 of the stream (1 created)") {
		t.Fatalf("error %q does not say which item failed", err)
	}
	if u, _ := srv.Store.Len(); u != 1 {
		t.Fatalf("store holds %d users, want the 1 before the invalid one", u)
	}
}

// A stream message that does not decode is InvalidArgument, as a unary
// request's is (not grpc-go's Internal).
func TestClientStreamMalformedMessage(t *testing.T) {
	_, conn := dialWith(t, server.Options{})
	desc := &grpc.StreamDesc{ClientStreams: true}
	cs, err := conn.NewStream(ctx(t), desc, "/wirebench.v1.UserService/CreateMany", grpc.ForceCodecV2(rawCodec{}))
	if err != nil {
		t.Fatal(err)
	}
	// Field 2 (name) declared 100 bytes long with 1 present.
	if err := cs.SendMsg(&[]byte{0x12, 100, 'x'}); err != nil {
		t.Fatal(err)
	}
	_ = cs.CloseSend()
	err = cs.RecvMsg(new([]byte))
	wantCode(t, err, codes.InvalidArgument)
}

func TestBidiChatEchoesEachMessageInOrder(t *testing.T) {
	_, conn := dialWith(t, server.Options{})
	ch, err := pb.NewEchoServiceClient(conn).Chat(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	// Ping-pong: each reply must arrive before the next request is sent,
	// so the server answers as messages arrive, not at the end.
	for i := range 100 {
		if err := ch.Send(&pb.EchoRequest{FirstMessage: fmt.Sprint(i, ":"), SecondMessage: "hi"}); err != nil {
			t.Fatal(err)
		}
		r, err := ch.Recv()
		if err != nil || r.Message != fmt.Sprint(i, ":hi") {
			t.Fatalf("reply %d = %v, %v", i, r, err)
		}
	}
	_ = ch.CloseSend()
	if _, err := ch.Recv(); !errors.Is(err, io.EOF) {
		t.Fatalf("after CloseSend: %v, want io.EOF", err)
	}
}

func TestBidiChatRefusesInvalidMessage(t *testing.T) {
	_, conn := dialWith(t, server.Options{})
	ch, err := pb.NewEchoServiceClient(conn).Chat(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	_ = ch.Send(&pb.EchoRequest{FirstMessage: strings.Repeat("x", 65537)})
	_, err = ch.Recv()
	wantCode(t, err, codes.InvalidArgument)
}

// A client that opens a server stream and never reads blocks the server's
// Send on flow control; the stream deadline (StreamDeadline) must release
// it. The client then sees DeadlineExceeded and fewer users than exist.
func TestStreamDeadlineReleasesStalledReader(t *testing.T) {
	// 300 ms deadline; the 10 s bound below is generous for a loaded
	// 2-CPU box, and far under a leak (the default is a minute).
	_, conn := dialWith(t, server.Options{SeedUsers: 50_000, MaxStreamDuration: 300 * time.Millisecond})
	start := time.Now()
	// The client's own deadline is far past the server's, so only the
	// server can end the stream within the bound below.
	cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := pb.NewUserServiceClient(conn).Stream(cctx, &pb.ListUsersRequest{})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(600 * time.Millisecond) // read nothing past the deadline
	n := 0
	for {
		_, err = st.Recv()
		if err != nil {
			break
		}
		n++
	}
	wantCode(t, err, codes.DeadlineExceeded)
	if n >= 50_000 {
		t.Fatalf("received all %d users: the deadline did not cut the stream", n)
	}
	if d := time.Since(start); testkit.Timing() && d > 10*time.Second {
		t.Fatalf("stream ended after %v", d)
	}

	// Unary calls are not given the stream deadline.
	if _, err := pb.NewUserServiceClient(conn).Get(ctx(t), &pb.GetUserRequest{Id: 1}); err != nil {
		t.Fatal(err)
	}
}

func TestStreamDeadlineBoundsIdleChat(t *testing.T) {
	_, conn := dialWith(t, server.Options{MaxStreamDuration: 200 * time.Millisecond})
	cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	ch, err := pb.NewEchoServiceClient(conn).Chat(cctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if d := time.Since(start); testkit.Timing() && d > 10*time.Second { // generous: the deadline is 200 ms
			t.Fatalf("chat ended after %v", d)
		}
	}()
	_, err = ch.Recv() // send nothing: the server waits in Recv until the deadline
	wantCode(t, err, codes.DeadlineExceeded)
}

func TestCreateManyLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("sends MaxCreateMany+1 messages")
	}
	srv, conn := dialWith(t, server.Options{})
	cs, err := pb.NewTodoServiceClient(conn).CreateMany(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	m := &pb.Todo{Text: "t"}
	for range grpcapi.MaxCreateMany + 1 {
		if err := cs.Send(m); err != nil {
			break // the server ended the call; CloseAndRecv has its status
		}
	}
	_, err = cs.CloseAndRecv()
	wantCode(t, err, codes.ResourceExhausted)
	if _, n := srv.Store.Len(); n != grpcapi.MaxCreateMany {
		t.Fatalf("store holds %d todos, want exactly %d", n, grpcapi.MaxCreateMany)
	}
}

// Reflection describes each streaming RPC with its kind, as grpcurl
// describe shows it.
func TestReflectionDescribesStreams(t *testing.T) {
	_, conn := dialWith(t, server.Options{})
	rc, err := grpc_reflection_v1.NewServerReflectionClient(conn).ServerReflectionInfo(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Send(&grpc_reflection_v1.ServerReflectionRequest{MessageRequest: &grpc_reflection_v1.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: "wirebench.v1.EchoService"}}); err != nil {
		t.Fatal(err)
	}
	resp, err := rc.Recv()
	if err != nil {
		t.Fatal(err)
	}
	methods := map[string]*descriptorpb.MethodDescriptorProto{}
	for _, raw := range resp.GetFileDescriptorResponse().GetFileDescriptorProto() {
		var fd descriptorpb.FileDescriptorProto
		if err := proto.Unmarshal(raw, &fd); err != nil {
			t.Fatal(err)
		}
		for _, svc := range fd.GetService() {
			for _, m := range svc.GetMethod() {
				methods[svc.GetName()+"."+m.GetName()] = m
			}
		}
	}
	kinds := map[string][2]bool{
		"UserService.Stream": {false, true}, "UserService.CreateMany": {true, false},
		"TodoService.Stream": {false, true}, "TodoService.CreateMany": {true, false},
		"EchoService.Chat": {true, true},
	}
	for name, k := range kinds {
		m := methods[name]
		if m == nil || m.GetClientStreaming() != k[0] || m.GetServerStreaming() != k[1] {
			t.Errorf("%s: client/server streaming want %v", name, k)
		}
	}
}
