package grpcapi_test

import (
	"context"
	"io"
	"net"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/stats"

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

// keepPayloads is a stats handler that keeps every message a server sends,
// as grpc-go's SendMsg allows one to (OutPayload.Payload, used lazily).
type keepPayloads struct {
	mu   sync.Mutex
	sent []*pb.User
}

func (k *keepPayloads) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (k *keepPayloads) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}
func (k *keepPayloads) HandleConn(context.Context, stats.ConnStats) {}
func (k *keepPayloads) HandleRPC(_ context.Context, s stats.RPCStats) {
	if p, ok := s.(*stats.OutPayload); ok {
		if u, ok := p.Payload.(*pb.User); ok {
			k.mu.Lock()
			k.sent = append(k.sent, u)
			k.mu.Unlock()
		}
	}
}

// TestStreamMessagesKept: on a *grpc.Server of the caller's (Register) or
// NewServer without ReuseSentMessages, a stats handler that keeps each
// sent message finds every user of the stream in it, in order: the user
// stream sends a fresh message each, as grpc-go's SendMsg asks. With
// ReuseSentMessages (a promise that nothing keeps them) the stream sends
// one message again and again, which is what the option is for.
func TestStreamMessagesKept(t *testing.T) {
	st := store.NewMemory(store.Options{})
	if err := st.Seed(100, 0); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		serve func(grpc.ServerOption) *grpc.Server
		fresh bool
	}{
		{"Register", func(o grpc.ServerOption) *grpc.Server {
			gs := grpc.NewServer(o)
			grpcapi.Register(gs, st)
			return gs
		}, true},
		{"NewServer", func(o grpc.ServerOption) *grpc.Server { return grpcapi.NewServer(st, o) }, true},
		{"NewServer+ReuseSentMessages", func(o grpc.ServerOption) *grpc.Server {
			return grpcapi.NewServer(st, o, grpcapi.ReuseSentMessages())
		}, false},
	} {
		k := &keepPayloads{}
		gs := c.serve(grpc.StatsHandler(k))
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go gs.Serve(ln)
		cc, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		s, err := pb.NewUserServiceClient(cc).Stream(ctx(t), &pb.ListUsersRequest{})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for ; ; n++ {
			if _, err := s.Recv(); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("%s: user %d: %v", c.name, n+1, err)
			}
		}
		cc.Close()
		gs.Stop()
		want := st.ListUsers()
		if n != len(want) || len(k.sent) != len(want) {
			t.Fatalf("%s: %d users received, %d kept, want %d", c.name, n, len(k.sent), len(want))
		}
		distinct := map[*pb.User]bool{}
		for i, m := range k.sent {
			distinct[m] = true
			if c.fresh && (m.GetId() != want[i].ID || m.GetName() != want[i].Name) {
				t.Fatalf("%s: kept message %d is user %d %q, want %d %q", c.name, i, m.GetId(), m.GetName(), want[i].ID, want[i].Name)
			}
		}
		if got, wantN := len(distinct), map[bool]int{true: len(want), false: 1}[c.fresh]; got != wantN {
			t.Errorf("%s: %d distinct messages sent, want %d", c.name, got, wantN)
		}
	}
}
