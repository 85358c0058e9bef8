package grpcapi

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/wirebench/wirebench/pb"
	"github.com/wirebench/wirebench/store"
)

func getHandler(t *testing.T, sd *grpc.ServiceDesc) grpc.MethodHandler {
	t.Helper()
	for _, m := range sd.Methods {
		if m.MethodName == "Get" {
			return m.Handler
		}
	}
	t.Fatal("no Get")
	return nil
}

// TestDecodeErrorsAllocatesNothing: decodeErrors' wrapper costs a unary
// call no allocation over the generated handler's own (it cost two: a
// closure and a pendingRequest), and its pooled decoder still turns a
// request that does not decode into InvalidArgument, call after call.
func TestDecodeErrorsAllocatesNothing(t *testing.T) {
	st := store.NewMemory(store.Options{})
	if err := st.Seed(3, 0); err != nil {
		t.Fatal(err)
	}
	srv := users{st: st}
	raw, wrapped := getHandler(t, &pb.UserService_ServiceDesc), getHandler(t, decodeErrors(&pb.UserService_ServiceDesc))
	req, err := proto.Marshal(&pb.GetUserRequest{Id: 2})
	if err != nil {
		t.Fatal(err)
	}
	decOf := func(b []byte) func(any) error {
		return func(v any) error { return serverCodec{}.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, v) }
	}
	dec, ctx := decOf(req), context.Background()
	call := func(h grpc.MethodHandler, dec func(any) error) (*pb.User, error) {
		resp, err := h(srv, ctx, dec, nil)
		if err != nil {
			return nil, err
		}
		return resp.(*pb.User), nil
	}
	if u, err := call(wrapped, dec); err != nil || u.GetId() != 2 {
		t.Fatalf("wrapped Get: %v, %v", u, err)
	}
	a := testing.AllocsPerRun(500, func() { call(raw, dec) })
	b := testing.AllocsPerRun(500, func() { call(wrapped, dec) })
	if b > a {
		t.Errorf("decodeErrors adds %v allocations per call (%v against the generated handler's %v)", b-a, b, a)
	}
	bad := decOf([]byte{0x08}) // field 1, varint, cut short
	for i := range 3 {
		_, err := call(wrapped, bad)
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "UserService/Get request") {
			t.Fatalf("call %d: malformed request: %v", i, err)
		}
		if u, err := call(wrapped, dec); err != nil || u.GetId() != 2 {
			t.Fatalf("call %d: Get after a malformed one: %v, %v", i, u, err)
		}
	}
}
