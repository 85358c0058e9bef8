package grpcapi_test

import (
	"bytes"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"

	"github.com/wirebench/wirebench/pb"
)

// rawCodec sends []byte as the message as it is, to put malformed
// protobuf on the wire.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }
func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(*v.(*[]byte))}, nil
}
func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*v.(*[]byte) = data.Materialize()
	return nil
}

// TestMalformedRequestIsInvalidArgument: grpc-go answers a request its
// codec cannot decode with Internal; our table (codeOf) says a malformed
// request is InvalidArgument (issue 10 item 7). Nothing may change in the
// store, and the server keeps answering.
func TestMalformedRequestIsInvalidArgument(t *testing.T) {
	srv, conn := dial(t)
	ctx := ctx(t)
	deepGroups := append(bytes.Repeat([]byte{0x2b}, 100), bytes.Repeat([]byte{0x2c}, 100)...) // field 5 start/end group ×100 (the limit is 64)
	cases := map[string][]byte{
		"truncated varint":     {0x08},
		"truncated length":     {0x12, 0x05, 'a'},
		"reserved wire type":   {0x0e},
		"field number zero":    {0x00, 0x01},
		"invalid UTF-8 string": {0x12, 0x02, 0xff, 0xfe},
		"unterminated group":   {0x2b},
		"mismatched end group": {0x2b, 0x34},
		"huge length":          {0x12, 0xff, 0xff, 0xff, 0xff, 0x0f},
		"deep unknown groups":  deepGroups,
		"bad nested timestamp": {0x22, 0x02, 0x08, 0x80},
	}
	for _, method := range []string{"/wirebench.v1.UserService/Create", "/wirebench.v1.UserService/Update", "/wirebench.v1.EchoService/Echo", "/wirebench.v1.TodoService/Create"} {
		for name, body := range cases {
			var out []byte
			err := conn.Invoke(ctx, method, &body, &out, grpc.ForceCodecV2(rawCodec{}))
			if name == "bad nested timestamp" && !strings.HasPrefix(method, "/wirebench.v1.UserService/") {
				continue // field 4 is unknown outside User: the body is valid
			}
			// "malformed": refused by decoding, not by validation.
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "malformed") {
				t.Errorf("%s %s: %v, want InvalidArgument", method, name, err)
			}
		}
	}
	if u, td := srv.Store.Len(); u != 10 || td != 10 {
		t.Fatalf("store has %d users, %d todos", u, td)
	}
	if _, err := pb.NewUserServiceClient(conn).Get(ctx, &pb.GetUserRequest{Id: 1}); err != nil {
		t.Fatalf("server stopped answering: %v", err)
	}
}
