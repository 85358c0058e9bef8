package grpcany_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/grpcany"
	"github.com/wirebench/wirebench/load/grpcany/grpcanytest"
	"github.com/wirebench/wirebench/measure"
)

// TestReplayCallChecks: a recorded message that does not fit its method's
// request is a counted failure naming the message, never sent as another
// one; and a hit the schedule does not hold (the engine's numbering gone
// wrong) fails rather than sending a made-up call.
func TestReplayCallChecks(t *testing.T) {
	srv := grpcanytest.Start(t, true)
	bad := filepath.Join(t.TempDir(), "unfit.jsonl")
	os.WriteFile(bad, []byte(`{"t": 0, "grpc": "grpc.testing.TestService/UnaryCall", "data": {"response_size": "many"}}`+"\n"), 0o600)
	o := grpcany.ReplayOptions{File: bad}
	o.URL = srv.Addr
	before := srv.Calls.Load()
	if res := runReplay(t, o); res.Failed != 1 || res.Failures["request: does not fit grpc.testing.SimpleRequest"] != 1 {
		t.Errorf("failures %v: want the unfit message counted", res.Failures)
	}
	if n := srv.Calls.Load() - before; n != 0 {
		t.Errorf("the server got %d calls for a message that does not fit", n)
	}
	// A unary call recorded with two messages is not sent as one of them.
	os.WriteFile(bad, []byte(`{"t": 0, "grpc": "grpc.testing.TestService/UnaryCall", "msgs": [{}, {}]}`+"\n"), 0o600)
	if res := runReplay(t, o); res.Failed != 1 || res.Failures["request: 2 messages for a method that sends one"] != 1 {
		t.Errorf("failures %v: want the two messages counted", res.Failures)
	}
	if n := srv.Calls.Load() - before; n != 0 {
		t.Errorf("the server got %d calls for a unary call of two messages", n)
	}

	sc, err := grpcany.NewReplay(context.Background(), grpcany.ReplayOptions{File: writeRecording(t, 3), Options: o.Options})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	vu, err := sc.NewVU(context.Background(), 0, new(measure.Bytes))
	if err != nil {
		t.Fatal(err)
	}
	defer vu.Close()
	out := load.Outcome{Hit: 1 << 40}
	vu.Do(context.Background(), &out)
	if out.Fail != "replay: no call scheduled" {
		t.Errorf("an unscheduled hit: fail %q", out.Fail)
	}
	if n := srv.Calls.Load() - before; n != 0 {
		t.Errorf("the server got %d calls for an unscheduled hit", n)
	}
}
