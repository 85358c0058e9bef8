package grpcapi_test

import (
	"context"
	"flag"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	"github.com/wirebench/wirebench/pb"
	"github.com/wirebench/wirebench/server"
)

// transport is the gRPC server transport the tests run on: grpc-go's
// (serve's default, what users deploy) unless -grpc-transport lean (ours,
// h2grpc): CI runs both.
var transport = flag.String("grpc-transport", server.GRPCGrpcGo, "gRPC server transport under test: grpc-go or lean")

func dial(t *testing.T) (*server.Server, *grpc.ClientConn) {
	t.Helper()
	return dialWith(t, server.Options{SeedUsers: 10, SeedTodos: 10})
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

func wantCode(t *testing.T, err error, code codes.Code) {
	t.Helper()
	if status.Code(err) != code {
		t.Fatalf("got %v, want code %v", err, code)
	}
}

func TestUserService(t *testing.T) {
	srv, conn := dial(t)
	c := pb.NewUserServiceClient(conn)
	ctx := ctx(t)
	created, err := c.Create(ctx, &pb.User{Id: 999, Name: "Ada", Email: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if created.Id != 11 || created.CreatedAt == nil {
		t.Fatalf("server must assign id and created_at: %v", created)
	}
	stored, _ := srv.Store.GetUser(created.Id)
	if !created.CreatedAt.AsTime().Equal(stored.CreatedAt) {
		t.Fatalf("timestamp %v, stored %v", created.CreatedAt.AsTime(), stored.CreatedAt)
	}
	got, err := c.Get(ctx, &pb.GetUserRequest{Id: created.Id})
	if err != nil || got.Name != "Ada" || !got.CreatedAt.AsTime().Equal(stored.CreatedAt) {
		t.Fatalf("Get = %v, %v", got, err)
	}
	upd, err := c.Update(ctx, &pb.User{Id: created.Id, Name: "Ada L", Email: "ada@l.org"})
	if err != nil || upd.Name != "Ada L" || !upd.CreatedAt.AsTime().Equal(stored.CreatedAt) {
		t.Fatalf("Update = %v, %v (created_at must be kept)", upd, err)
	}
	list, err := c.List(ctx, &pb.ListUsersRequest{})
	if err != nil || len(list.Users) != 11 || list.Users[10].Name != "Ada L" {
		t.Fatalf("List = %d users, %v", len(list.GetUsers()), err)
	}
	for i := 1; i < len(list.Users); i++ {
		if list.Users[i-1].Id >= list.Users[i].Id {
			t.Fatal("List not ordered by id")
		}
	}
	if _, err := c.Delete(ctx, &pb.DeleteUserRequest{Id: created.Id}); err != nil {
		t.Fatal(err)
	}
	_, err = c.Get(ctx, &pb.GetUserRequest{Id: created.Id})
	wantCode(t, err, codes.NotFound)
	_, err = c.Delete(ctx, &pb.DeleteUserRequest{Id: created.Id})
	wantCode(t, err, codes.NotFound)
	_, err = c.Update(ctx, &pb.User{Id: 12345, Name: "x", Email: "x@y.io"})
	wantCode(t, err, codes.NotFound)
	_, err = c.Create(ctx, &pb.User{Name: "x", Email: "not-an-email"})
	wantCode(t, err, codes.InvalidArgument)
	_, err = c.Update(ctx, &pb.User{Id: 1, Name: "", Email: "x@y.io"})
	wantCode(t, err, codes.InvalidArgument)
	if n, _ := srv.Store.Len(); n != 10 {
		t.Fatalf("store has %d users after the failures, want 10", n)
	}
}

func TestTodoService(t *testing.T) {
	srv, conn := dial(t)
	c := pb.NewTodoServiceClient(conn)
	ctx := ctx(t)
	created, err := c.Create(ctx, &pb.Todo{Text: "Buy milk"})
	if err != nil || len(created.Id) != 36 {
		t.Fatalf("Create = %v, %v", created, err)
	}
	if got, err := c.Get(ctx, &pb.GetTodoRequest{Id: created.Id}); err != nil || got.Text != "Buy milk" {
		t.Fatalf("Get = %v, %v", got, err)
	}
	if upd, err := c.Update(ctx, &pb.Todo{Id: created.Id, Text: "Buy oat milk", Done: true}); err != nil || !upd.Done {
		t.Fatalf("Update = %v, %v", upd, err)
	}
	if list, err := c.List(ctx, &pb.ListTodosRequest{}); err != nil || len(list.Todos) != 11 {
		t.Fatalf("List = %d, %v", len(list.GetTodos()), err)
	}
	if _, err := c.Delete(ctx, &pb.DeleteTodoRequest{Id: created.Id}); err != nil {
		t.Fatal(err)
	}
	_, err = c.Get(ctx, &pb.GetTodoRequest{Id: created.Id})
	wantCode(t, err, codes.NotFound)
	_, err = c.Create(ctx, &pb.Todo{Text: "  "})
	wantCode(t, err, codes.InvalidArgument)
	if _, n := srv.Store.Len(); n != 10 {
		t.Fatalf("store has %d todos, want 10", n)
	}
}

func TestEchoService(t *testing.T) {
	_, conn := dial(t)
	r, err := pb.NewEchoServiceClient(conn).Echo(ctx(t), &pb.EchoRequest{FirstMessage: "Hello, ", SecondMessage: "World!"})
	if err != nil || r.Message != "Hello, World!" {
		t.Fatalf("Echo = %v, %v", r, err)
	}
}

func TestReflectionAndHealth(t *testing.T) {
	_, conn := dial(t)
	ctx := ctx(t)
	h, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: "wirebench.v1.UserService"})
	if err != nil || h.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health = %v, %v", h, err)
	}
	stream, err := reflectpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&reflectpb.ServerReflectionRequest{MessageRequest: &reflectpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	resp, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		names = append(names, s.Name)
	}
	for _, want := range []string{"wirebench.v1.UserService", "wirebench.v1.TodoService", "wirebench.v1.EchoService", "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection"} {
		if !slices.Contains(names, want) {
			t.Errorf("reflection lists %v, missing %s", names, want)
		}
	}
}
