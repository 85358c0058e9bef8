package grpcapi_test

import (
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/wirebench/wirebench/grpcapi"
	"github.com/wirebench/wirebench/pb"
	"github.com/wirebench/wirebench/store"
)

// TestRegisterOnPlainServer: a library user registers our services on a
// *grpc.Server of their own, without ServerCodec; requests still decode.
func TestRegisterOnPlainServer(t *testing.T) {
	st := store.NewMemory(store.Options{})
	if err := st.Seed(3, 0); err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	grpcapi.Register(gs, st)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)
	cc, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	u, err := pb.NewUserServiceClient(cc).Get(ctx(t), &pb.GetUserRequest{Id: 2})
	if err != nil {
		t.Fatalf("Get on a plain server: %v", err)
	}
	if u.GetId() != 2 {
		t.Fatalf("got user %d, want 2", u.GetId())
	}
}
