package study

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/grpcany/grpcanytest"
	"github.com/wirebench/wirebench/load/replay"
	"github.com/wirebench/wirebench/results"
)

// A cell's replay: of a recording of gRPC calls sends them through
// load/grpcany at their recorded times: every call, the server's count
// equal to ours.
func TestReplayCellOfGRPCCalls(t *testing.T) {
	srv := grpcanytest.Start(t, true)
	var b strings.Builder
	for i := range 60 {
		fmt.Fprintf(&b, `{"t": %d, "grpc": "grpc.testing.TestService/UnaryCall", "data": {"response_status": {"message": "s%d"}}}`+"\n", 1764388800000+i, i)
	}
	file := filepath.Join(t.TempDir(), "calls.jsonl")
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	l := LoadSpec{Replay: &replay.Options{File: file, Speed: 4, Options: conn.Options{URL: srv.Addr}}}
	o := load.Options{}
	o.Concurrency, o.Duration = 4, time.Minute
	var res *results.Load
	if err := runLoad(context.Background(), l, o, vars{}, &res); err != nil {
		t.Fatal(err)
	}
	if res.Requests != 60 || res.Failed != 0 || srv.Calls.Load() != 60 {
		t.Fatalf("%d calls, %d failed (%v), the server counted %d; want 60, none failed", res.Requests, res.Failed, res.Failures, srv.Calls.Load())
	}
	if ids, most := srv.IDs(); ids != 60 || most != 1 {
		t.Fatalf("server saw %d ids (most %d times)", ids, most)
	}
}
