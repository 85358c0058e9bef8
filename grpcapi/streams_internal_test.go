package grpcapi

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/tap"

	"github.com/wirebench/wirebench/h2grpc"
	"github.com/wirebench/wirebench/pb"
	"github.com/wirebench/wirebench/store"
)

// StreamDeadline bounds exactly the five streaming RPCs.
func TestStreamDeadlineMethods(t *testing.T) {
	tapFn := StreamDeadline(time.Hour)
	for _, c := range []struct {
		method string
		bound  bool
	}{
		{"/wirebench.v1.UserService/Stream", true},
		{"/wirebench.v1.UserService/CreateMany", true},
		{"/wirebench.v1.TodoService/Stream", true},
		{"/wirebench.v1.TodoService/CreateMany", true},
		{"/wirebench.v1.EchoService/Chat", true},
		{"/wirebench.v1.UserService/Get", false},
		{"/wirebench.v1.EchoService/Echo", false},
		{"/grpc.health.v1.Health/Watch", false},
	} {
		ctx, err := tapFn(context.Background(), &tap.Info{FullMethodName: c.method})
		_, has := ctx.Deadline()
		if err != nil || has != c.bound {
			t.Errorf("%s: deadline %v, want %v (%v)", c.method, has, c.bound, err)
		}
	}
	if len(streamMethods) != 5 {
		t.Errorf("%d streaming methods: %v", len(streamMethods), streamMethods)
	}
}

// sendOnly is a server stream whose Send drops the message.
type sendOnly[T any] struct {
	grpc.ServerStream
	ctx context.Context
}

func (s sendOnly[T]) Context() context.Context { return s.ctx }
func (s sendOnly[T]) Send(*T) error            { return nil }

// TestStreamReuseAllocations: where the server allows it (reuse:
// ReuseSentMessages, h2grpc), a stream of 1,000 users or todos allocates
// its one message, not one a message (1,000 before), so the GC runs less
// often during a stream (docs/grpc.md, "the stream's bytes").
func TestStreamReuseAllocations(t *testing.T) {
	st := store.NewMemory(store.Options{})
	if err := st.Seed(1000, 1000); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_ = users{st: st}.Stream(nil, sendOnly[pb.User]{ctx: ctx}) // the store's cached list
	for _, c := range []struct {
		name     string
		stream   func() error
		min, max float64
	}{
		{"users, fresh", func() error { return users{st: st}.Stream(nil, sendOnly[pb.User]{ctx: ctx}) }, 1000, 1002},
		{"users, reused", func() error { return users{st: st, reuse: true}.Stream(nil, sendOnly[pb.User]{ctx: ctx}) }, 0, 2},
		{"todos, reused", func() error { return todos{st: st, reuse: true}.Stream(nil, sendOnly[pb.Todo]{ctx: ctx}) }, 0, 2},
	} {
		var err error
		n := testing.AllocsPerRun(5, func() { err = c.stream() })
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if n < c.min || n > c.max {
			t.Errorf("%s: %v allocations a stream of 1,000, want %v to %v", c.name, n, c.min, c.max)
		}
	}
}

// TestRegisterReuses: Register reuses stream messages on an h2grpc server
// (its SendMsg copies the bytes and keeps nothing), not on a *grpc.Server
// of the caller's (a stats handler may keep them).
func TestRegisterReuses(t *testing.T) {
	if !reuses(h2grpc.New(h2grpc.Options{})) {
		t.Error("h2grpc server: messages not reused")
	}
	if reuses(grpc.NewServer()) {
		t.Error("*grpc.Server: messages reused")
	}
}
