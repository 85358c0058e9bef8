package grpcapi_test

import (
	"net"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/wirebench/wirebench/grpcapi"
	"github.com/wirebench/wirebench/pb"
	"github.com/wirebench/wirebench/store"
)

// TestTransportWindows: with TransportOptions' static windows (the
// smallest, 64 KiB, and one below it that must be raised to it),
// requests and replies larger than a window, several at once on one
// connection, complete: window updates flow without BDP estimation. Both
// ends use static windows, as our load client does.
func TestTransportWindows(t *testing.T) {
	for _, window := range []int32{64 << 10, 1 << 10} {
		st := store.NewMemory(store.Options{})
		s := grpcapi.NewServer(st, grpcapi.TransportOptions(window)...)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go func() { _ = s.Serve(ln) }()
		t.Cleanup(s.Stop)
		conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(64<<10))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		c := pb.NewEchoServiceClient(conn)
		ctx := ctx(t)
		// Two 64 KiB messages: a 128 KiB request and reply, twice the window.
		big := strings.Repeat("w", 64<<10)
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				r, err := c.Echo(ctx, &pb.EchoRequest{FirstMessage: big, SecondMessage: big})
				if err != nil {
					t.Errorf("window %d: %v", window, err)
					return
				}
				if len(r.GetMessage()) != 2*len(big) {
					t.Errorf("window %d: reply of %d bytes, want %d", window, len(r.GetMessage()), 2*len(big))
				}
			})
		}
		wg.Wait()
	}
}
