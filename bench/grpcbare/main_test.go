package main

import (
	"net"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/grpcapi"
	"github.com/wirebench/wirebench/store"
)

// TestRunAgainstGRPCGo: against grpc-go's server (our gRPC API), every
// call answers the user asked for, over the one connection; an unknown
// user is an error naming its grpc-status, not a latency.
func TestRunAgainstGRPCGo(t *testing.T) {
	st := store.NewMemory(store.Options{})
	if err := st.Seed(3, 0); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpcapi.NewServer(st, grpcapi.TransportOptions(1<<20)...)
	go s.Serve(ln)
	defer s.Stop()

	lat, err := run(ln.Addr().String(), 300, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(lat) != 300 {
		t.Fatalf("%d latencies for 300 calls", len(lat))
	}
	for i, d := range lat {
		if d <= 0 {
			t.Fatalf("call %d: latency %v", i, d)
		}
	}
	if _, err := run(ln.Addr().String(), 1, 99); err == nil || !strings.Contains(err.Error(), `grpc-status "5"`) {
		t.Errorf("unknown user: %v, want grpc-status 5 (NotFound)", err)
	}
}

func TestCheckUser(t *testing.T) {
	for _, body := range [][]byte{nil, {0, 0, 0, 0}, {1, 0, 0, 0, 0}, {0, 0, 0, 0, 9, 8}} {
		if err := checkUser(body, 1); err == nil {
			t.Errorf("checkUser(%v) = nil, want an error", body)
		}
	}
	if err := checkUser([]byte{0, 0, 0, 0, 2, 0x08, 0x01}, 1); err != nil {
		t.Errorf("user 1: %v", err)
	}
	if err := checkUser([]byte{0, 0, 0, 0, 2, 0x08, 0x02}, 1); err == nil {
		t.Error("user 2 taken for user 1")
	}
}
