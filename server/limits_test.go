package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/wirebench/wirebench/httpapi"
	"github.com/wirebench/wirebench/pb"
	"github.com/wirebench/wirebench/server"
)

// echoOfSize is an EchoRequest whose protobuf encoding is exactly n bytes
// (field 1, a length varint, the message).
func echoOfSize(t *testing.T, n int) *pb.EchoRequest {
	t.Helper()
	m := &pb.EchoRequest{}
	for k := n - 2; k > 0; k-- {
		m.FirstMessage = strings.Repeat("x", k)
		if proto.Size(m) == n {
			return m
		}
	}
	t.Fatalf("no echo request of %d bytes", n)
	return nil
}

// echoCode sends m to a fresh server with the given body limit and returns
// the call's status code.
func echoCode(t *testing.T, maxBody int64, m *pb.EchoRequest) codes.Code {
	t.Helper()
	srv, err := server.Start(context.Background(), server.Options{NoHTTP: true, GRPCAddr: "127.0.0.1:0", HTTP: httpapi.Options{MaxBody: maxBody}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cc, err := grpc.NewClient("passthrough:///"+srv.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = pb.NewEchoServiceClient(cc).Echo(ctx, m)
	return status.Code(err)
}

// TestGRPCMessageCap: the REST body limit caps gRPC messages too. A message
// of exactly the limit is received, one byte more is ResourceExhausted.
// The default (8 MiB, above gRPC's own 4 MiB) is pinned with literals; a
// message that big fails validation (echo messages are at most 64 KiB),
// which proves it was received.
func TestGRPCMessageCap(t *testing.T) {
	for _, tc := range []struct {
		name    string
		maxBody int64
		size    int
		want    codes.Code
	}{
		{"at a 4096-byte limit", 4096, 4096, codes.OK},
		{"one over a 4096-byte limit", 4096, 4097, codes.ResourceExhausted},
		{"at the 8 MiB default", 0, 8388608, codes.InvalidArgument},
		{"one over the 8 MiB default", 0, 8388609, codes.ResourceExhausted},
	} {
		if got := echoCode(t, tc.maxBody, echoOfSize(t, tc.size)); got != tc.want {
			t.Errorf("%s (%d bytes): %v, want %v", tc.name, tc.size, got, tc.want)
		}
	}
}
