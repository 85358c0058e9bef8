package scenario_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/scenario"
	"github.com/wirebench/wirebench/results"
)

// TestGRPCTimeoutCounted: a gRPC call that runs into the client's own
// per-request timeout is a "timeout", as on HTTP, not the gRPC code the
// deadline produced (grpcCall's check).
// A server's own DEADLINE_EXCEEDED, well before the client's deadline,
// stays a gRPC error.
func TestGRPCTimeoutCounted(t *testing.T) {
	for _, c := range []struct {
		c    corruption
		want map[string]int64
	}{
		{corruption{reply: replyGet, stall: true}, map[string]int64{"timeout": 3}},
		{corruption{reply: replyGet, code: codes.DeadlineExceeded}, map[string]int64{"grpc DeadlineExceeded": 3}},
	} {
		w := startWrongAPI(t, seedUsers, c.c)
		sc, err := scenario.New(scenario.Options{
			Name:    scenario.Get,
			Options: conn.Options{URL: w.GRPCAddr, Transport: scenario.TransportGRPC, Timeout: 300 * time.Millisecond},
			Format:  "protobuf",
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sc.(interface{ Close() error }).Close() })
		r, err := load.Run(context.Background(), load.Options{Options: results.Options{Concurrency: 1, Requests: 3}}, sc)
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(r.Failures, c.want) || r.Requests != 3 {
			t.Errorf("%d requests, failures %v; want %v", r.Requests, r.Failures, c.want)
		}
	}
}
