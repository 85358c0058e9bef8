package main

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/wirebench/wirebench/grpcapi"
	"github.com/wirebench/wirebench/pb"
	"github.com/wirebench/wirebench/store"
)

func serve(t *testing.T, s *grpc.Server) pb.UserServiceClient {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(s.Stop)
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return pb.NewUserServiceClient(conn)
}

func streamAll(t *testing.T, ctx context.Context, c pb.UserServiceClient) []*pb.User {
	t.Helper()
	st, err := c.Stream(ctx, &pb.ListUsersRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var out []*pb.User
	for {
		u, err := st.Recv()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, u)
	}
}

// TestSameWorkAsReference: the bare server answers Get and Stream with the
// very messages the reference service on grpc-go sends for the same seed
// (so bench/grpc-cpu.sh compares like with like), and an unknown user is
// NotFound on both.
func TestSameWorkAsReference(t *testing.T) {
	const n = 300
	list, err := seedUsers(n)
	if err != nil {
		t.Fatal(err)
	}
	bare := serve(t, newServer(list))
	st := store.NewMemory(store.Options{})
	if err := st.Seed(n, 0); err != nil {
		t.Fatal(err)
	}
	ref := serve(t, grpcapi.NewServer(st, grpcapi.TransportOptions(0)...))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, id := range []int64{1, 2, n} {
		a, err := bare.Get(ctx, &pb.GetUserRequest{Id: id})
		if err != nil {
			t.Fatal(err)
		}
		b, err := ref.Get(ctx, &pb.GetUserRequest{Id: id})
		if err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(a, b) || a.GetCreatedAt().GetNanos() == 0 {
			t.Fatalf("user %d: bare %v, reference %v", id, a, b)
		}
	}
	for _, c := range []pb.UserServiceClient{bare, ref} {
		if _, err := c.Get(ctx, &pb.GetUserRequest{Id: n + 1}); status.Code(err) != codes.NotFound {
			t.Fatalf("unknown user: %v", err)
		}
	}
	a, b := streamAll(t, ctx, bare), streamAll(t, ctx, ref)
	if len(a) != n || len(b) != n {
		t.Fatalf("streams of %d and %d users, want %d", len(a), len(b), n)
	}
	for i := range a {
		if !proto.Equal(a[i], b[i]) || a[i].GetId() != int64(i+1) {
			t.Fatalf("message %d: bare %v, reference %v", i, a[i], b[i])
		}
	}
}
