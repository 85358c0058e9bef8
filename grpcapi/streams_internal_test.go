package grpcapi

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/tap"
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
