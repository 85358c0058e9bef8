package grpcany_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/protobuf/proto"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/grpcany"
	"github.com/wirebench/wirebench/load/grpcany/grpcanytest"
	"github.com/wirebench/wirebench/load/replay"
	"github.com/wirebench/wirebench/results"
)

// writeRecording writes n recorded calls of grpc-go's TestService, 1 ms
// apart: UnaryCall as JSON with a unique id and metadata, every third one
// recorded as NotFound (the interop server answers the code a request
// asks for), and every fifth as binary protobuf; one malformed line.
func writeRecording(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		at := fmt.Sprintf("%.3f", 1764388800+float64(i)/1000)
		switch {
		case i%5 == 4:
			bin, err := proto.Marshal(&testpb.SimpleRequest{ResponseSize: 1, ResponseStatus: &testpb.EchoStatus{Message: fmt.Sprintf("bin-%d", i)}})
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, `{"t": %s, "grpc": "grpc.testing.TestService/UnaryCall", "bin": %q}`+"\n", at, base64.StdEncoding.EncodeToString(bin))
		case i%3 == 2:
			fmt.Fprintf(&b, `{"t": %s, "grpc": "grpc.testing.TestService/UnaryCall", "data": {"response_status": {"code": 5, "message": "nf-%d"}}, "code": "NOT_FOUND"}`+"\n", at, i)
		default:
			fmt.Fprintf(&b, `{"t": %s, "grpc": "grpc.testing.TestService/UnaryCall", "data": {"response_size": 2, "response_status": {"message": "id-%d"}}, "md": {"x-call": "c%d"}}`+"\n", at, i, i%2)
		}
		if i == n/2 {
			b.WriteString(`{"t": 1, "grpc": "no-method"}` + "\n")
		}
	}
	p := filepath.Join(t.TempDir(), "calls.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func runReplay(t *testing.T, o grpcany.ReplayOptions) *results.Load {
	t.Helper()
	sc, err := grpcany.NewReplay(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	lo := load.Options{Pacer: sc.Pacer()}
	lo.Open, lo.Concurrency, lo.Duration = true, 4, time.Minute
	res, err := load.Run(context.Background(), lo, sc)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestReplayRecording replays a recording of gRPC calls against grpc-go's
// own TestService, found by reflection, on both clients: every call sent
// at its time, each checked against its recorded status, the server's
// count equal to ours, every recorded id seen once per replay.
func TestReplayRecording(t *testing.T) {
	srv := grpcanytest.Start(t, true)
	file := writeRecording(t, 150)
	if !replay.IsGRPCRecording(file) {
		t.Fatal("the recording is not recognised as gRPC calls")
	}
	for i, client := range []string{conn.ClientLean, conn.ClientStd} {
		t.Run(client, func(t *testing.T) {
			o := grpcany.ReplayOptions{File: file, Speed: 10}
			o.URL, o.Client, o.Metadata = srv.Addr, client, []string{"x-replay: " + client}
			before := srv.Calls.Load()
			res := runReplay(t, o)
			if res.Requests != 150 || res.Failed != 0 {
				t.Fatalf("%d calls, %d failed (%v); want 150, none failed", res.Requests, res.Failed, res.Failures)
			}
			if got := srv.Calls.Load() - before; got != 150 {
				t.Fatalf("the server counted %d calls, we 150", got)
			}
			if ids, most := srv.IDs(); ids != 150 || most != i+1 {
				t.Fatalf("server saw %d distinct ids (most %d times); want 150, %d times each", ids, most, i+1)
			}
			if got := srv.Metadata("x-replay=" + client); got != 150 {
				t.Fatalf("%d calls carried -H's metadata, want 150", got)
			}
			want := 0
			for j := range 150 {
				if j%5 != 4 && j%3 != 2 && j%2 == 1 {
					want++
				}
			}
			if got := srv.Metadata("x-call=c1"); got != want*(i+1) {
				t.Fatalf("%d calls carried their recorded metadata, want %d", got, want*(i+1))
			}
			if len(res.Ops) != 1 || res.Ops[0].Name != "grpc.testing.TestService/UnaryCall" || res.Ops[0].Latency.Count() != 150 {
				t.Fatalf("ops %+v: want the method's", res.Ops)
			}
			if len(res.Warnings) == 0 || !strings.Contains(strings.Join(res.Warnings, "\n"), "1 malformed lines skipped") {
				t.Fatalf("warnings %q: want the malformed line", res.Warnings)
			}
		})
	}
	// A recorded status the replay does not get is a counted failure.
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(bad, []byte(`{"t": 0, "grpc": "grpc.testing.TestService/UnaryCall", "data": {}, "code": "NotFound"}`+"\n"), 0o600)
	o := grpcany.ReplayOptions{File: bad}
	o.URL = srv.Addr
	if res := runReplay(t, o); res.Failed != 1 || res.Failures["grpc OK, recorded NotFound"] != 1 {
		t.Fatalf("failures %v: want the recorded status missed", res.Failures)
	}
}

// TestReplayStreams replays recorded streams of each kind on both
// clients: each call's recorded messages reach the server (JSON and
// protobuf, a client stream of none), every reply read, each call checked
// against its recorded status.
func TestReplayStreams(t *testing.T) {
	srv := grpcanytest.Start(t, true)
	bin := func(m proto.Message) string {
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return base64.StdEncoding.EncodeToString(b)
	}
	rec := `{"t": 0, "grpc": "grpc.testing.TestService/FullDuplexCall", "msgs": [{"response_parameters": [{"size": 1}], "response_status": {"message": "a1"}}, {"response_parameters": [{"size": 2}, {"size": 1}], "response_status": {"message": "a2"}}]}
{"t": 0.001, "grpc": "grpc.testing.TestService/StreamingInputCall", "bins": ["` + bin(&testpb.StreamingInputCallRequest{Payload: &testpb.Payload{Body: []byte("xyz")}}) + `", "` + bin(&testpb.StreamingInputCallRequest{}) + `"]}
{"t": 0.002, "grpc": "grpc.testing.TestService/StreamingInputCall", "bins": []}
{"t": 0.003, "grpc": "grpc.testing.TestService/StreamingOutputCall", "data": {"response_parameters": [{"size": 3}, {"size": 3}, {"size": 3}], "response_status": {"message": "so"}}}
{"t": 0.004, "grpc": "grpc.testing.TestService/FullDuplexCall", "msgs": [{"response_status": {"code": 5, "message": "nf"}}], "code": "NotFound"}
`
	file := filepath.Join(t.TempDir(), "streams.jsonl")
	os.WriteFile(file, []byte(rec), 0o600)
	for _, client := range []string{conn.ClientLean, conn.ClientStd} {
		t.Run(client, func(t *testing.T) {
			o := grpcany.ReplayOptions{File: file, Speed: 10}
			o.URL, o.Client = srv.Addr, client
			calls, msgs := srv.Calls.Load(), srv.Messages.Load()
			res := runReplay(t, o)
			if res.Requests != 5 || res.Failed != 0 {
				t.Fatalf("%d calls, %d failed (%v); want 5, none failed", res.Requests, res.Failed, res.Failures)
			}
			if c, m := srv.Calls.Load()-calls, srv.Messages.Load()-msgs; c != 5 || m != 6 {
				t.Fatalf("the server counted %d calls and %d messages, want 5 and 6", c, m)
			}
			// replies: 3 of bidi a1+a2, the client stream's two, the server stream's 3
			// payloads of 3 bytes (2 bytes of framing each): 1+2+1+9 bytes of payload at least
			if res.Bytes.BodyIn < 3+3*5 || len(res.Ops) != 3 {
				t.Fatalf("body in %d, ops %d: want every reply read, per method", res.Bytes.BodyIn, len(res.Ops))
			}
		})
	}
	// The recorded status must come: a bidi call recorded NotFound that
	// the server now answers OK is a counted failure.
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(bad, []byte(`{"t": 0, "grpc": "grpc.testing.TestService/FullDuplexCall", "msgs": [{}], "code": "NotFound"}`+"\n"), 0o600)
	o := grpcany.ReplayOptions{File: bad}
	o.URL = srv.Addr
	if res := runReplay(t, o); res.Failed != 1 || res.Failures["grpc OK, recorded NotFound"] != 1 {
		t.Fatalf("failures %v: want the recorded status missed", res.Failures)
	}
}
