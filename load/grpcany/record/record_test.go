package record_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/grpcany"
	"github.com/wirebench/wirebench/load/grpcany/grpcanytest"
	"github.com/wirebench/wirebench/load/grpcany/record"
	"github.com/wirebench/wirebench/load/replay"
)

// TestRecordThenReplay records the calls a stock grpc-go server handles
// (with metadata, and some ending NotFound) through the interceptor, then
// replays the recording against a second server: the second server's
// calls and ids equal the first's, every call checked against its
// recorded status.
func TestRecordThenReplay(t *testing.T) {
	file := filepath.Join(t.TempDir(), "calls.jsonl")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	rec := record.New(f)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a, stop := grpcanytest.Serve(ln, true, grpc.ChainUnaryInterceptor(rec.Unary))
	defer stop()
	data := filepath.Join(t.TempDir(), "reqs.jsonl") // request N is line N mod 4: the fourth asks for NotFound
	ok := `{"response_status": {"message": "r{{.N}}"}}` + "\n"
	if err := os.WriteFile(data, []byte(ok+ok+ok+`{"response_status": {"code": 5, "message": "r{{.N}}"}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := grpcany.Options{Method: "grpc.testing.TestService/UnaryCall", Metadata: []string{"x-tenant: t1"}, DataFile: data}
	o.URL = a.Addr
	sc, err := grpcany.New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	lo := load.Options{}
	lo.Concurrency, lo.Requests = 3, 80
	res, err := load.Run(context.Background(), lo, sc)
	if err != nil {
		t.Fatal(err)
	}
	sc.Close()
	if res.Requests != 80 || res.Failed != 20 || a.Calls.Load() != 80 { // every 4th asked for NotFound
		t.Fatalf("recorded run: %d calls, %d failed (%v), server %d", res.Requests, res.Failed, res.Failures, a.Calls.Load())
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if !replay.IsGRPCRecording(file) {
		t.Fatal("not recognised as a recording of gRPC calls")
	}

	b := grpcanytest.Start(t, false)
	ro := grpcany.ReplayOptions{File: file, Speed: 1000}
	ro.URL = b.Addr
	ro.Protoset = writeProtoset(t) // b has no reflection
	rp, err := grpcany.NewReplay(context.Background(), ro)
	if err != nil {
		t.Fatal(err)
	}
	defer rp.Close()
	lo = load.Options{Pacer: rp.Pacer()}
	lo.Open, lo.Concurrency, lo.Duration = true, 4, time.Minute
	res, err = load.Run(context.Background(), lo, rp)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 80 || res.Failed != 0 || b.Calls.Load() != 80 {
		t.Fatalf("replay: %d calls, %d failed (%v), server %d; want 80 checked against their recorded status", res.Requests, res.Failed, res.Failures, b.Calls.Load())
	}
	if ids, most := b.IDs(); ids != 80 || most != 1 {
		t.Fatalf("replayed ids: %d distinct (most %d times), want 80 once", ids, most)
	}
	if got := b.Metadata("x-tenant=t1"); got != 80 {
		t.Fatalf("%d replayed calls carried the recorded metadata, want 80", got)
	}
}

func writeProtoset(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "test.protoset")
	grpcanytest.WriteProtoset(t, p)
	return p
}
