package record_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/conn"
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

// TestRecordThenReplayStreams records streaming calls of each kind
// through the stream interceptor (a quarter of the bidi calls ending
// NotFound, a client stream of no message) and replays them against a
// second server on both clients (the lean one's streams go over grpc-go):
// the second server's calls, messages and ids equal the first's, every
// call checked against its recorded status.
func TestRecordThenReplayStreams(t *testing.T) {
	file := filepath.Join(t.TempDir(), "streams.jsonl")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	rec := record.New(f)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a, stop := grpcanytest.Serve(ln, true, grpc.ChainUnaryInterceptor(rec.Unary), grpc.ChainStreamInterceptor(rec.Stream))
	defer stop()
	data := filepath.Join(t.TempDir(), "fd.jsonl") // request N is line N mod 4: the fourth asks for NotFound
	fd := `{"response_parameters": [{"size": 1}], "response_status": {"message": "fd{{.N}}.{{.I}}"}}` + "\n"
	if err := os.WriteFile(data, []byte(fd+fd+fd+strings.Replace(fd, `"response_status": {`, `"response_status": {"code": 5, `, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	var calls, failed int64
	for _, c := range []struct {
		method, data, file string
		messages           int
	}{
		{"StreamingOutputCall", `{"response_parameters": [{"size": 2}, {"size": 2}], "response_status": {"message": "so{{.N}}"}}`, "", 1},
		{"StreamingInputCall", `{"payload": {"body": "AAAA"}}`, "", 3},
		{"FullDuplexCall", "", data, 4},
	} {
		o := grpcany.Options{Method: "grpc.testing.TestService/" + c.method, Data: c.data, DataFile: c.file, Messages: c.messages, Metadata: []string{"x-tenant: t2"}}
		o.URL = a.Addr
		sc, err := grpcany.New(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		lo := load.Options{}
		lo.Concurrency, lo.Requests = 2, 20
		res, err := load.Run(context.Background(), lo, sc)
		if err != nil {
			t.Fatal(err)
		}
		sc.Close()
		calls += res.Requests
		failed += res.Failed
	}
	// A client stream that sends nothing, called with grpc-go itself.
	cc, err := grpc.NewClient(a.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	st, err := testgrpc.NewTestServiceClient(cc).StreamingInputCall(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CloseAndRecv(); err != nil {
		t.Fatal(err)
	}
	cc.Close()
	calls++
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	// A bidi call asking for NotFound ends at its first message.
	if calls != 61 || failed != 5 || a.Calls.Load() != 61 || a.Messages.Load() != 20+60+15*4+5 {
		t.Fatalf("recorded run: %d calls, %d failed; server %d calls, %d messages", calls, failed, a.Calls.Load(), a.Messages.Load())
	}
	b := grpcanytest.Start(t, false)
	for i, client := range []string{conn.ClientLean, conn.ClientStd} {
		ro := grpcany.ReplayOptions{File: file, Speed: 1000}
		ro.URL, ro.Client = b.Addr, client
		ro.Protoset = writeProtoset(t)
		rp, err := grpcany.NewReplay(context.Background(), ro)
		if err != nil {
			t.Fatal(err)
		}
		lo := load.Options{Pacer: rp.Pacer()}
		lo.Open, lo.Concurrency, lo.Duration = true, 4, time.Minute
		res, err := load.Run(context.Background(), lo, rp)
		rp.Close()
		if err != nil {
			t.Fatal(err)
		}
		k := int64(i + 1)
		if res.Requests != 61 || res.Failed != 0 || b.Calls.Load() != 61*k || b.Messages.Load() != a.Messages.Load()*k {
			t.Fatalf("%s replay: %d calls, %d failed (%v); server %d calls, %d messages; want 61 calls and %d messages a replay, none failed",
				client, res.Requests, res.Failed, res.Failures, b.Calls.Load(), b.Messages.Load(), a.Messages.Load())
		}
		if ids, most := b.IDs(); ids != 20+65 || most != i+1 {
			t.Fatalf("%s replay: %d distinct ids (most %d times), want 85, %d times each", client, ids, most, i+1)
		}
		if got := b.Metadata("x-tenant=t2"); got != 60*(i+1) {
			t.Fatalf("%s replay: %d calls carried the recorded metadata, want %d", client, got, 60*(i+1))
		}
		if res.Bytes.BodyIn == 0 || res.Bytes.WireOut == 0 {
			t.Fatalf("%s replay: bytes %+v", client, res.Bytes)
		}
	}
}

// TestRecordRedactsSecretMetadata: a recording keeps no secrets by
// default, as HTTP recordings: the values of metadata keys named like
// secrets (authorization, cookie, x-api-key, …: reqlog.IsSecret) or that
// are credentials (a bearer token, a key of a known form) are written
// REDACTED, a path's credentials too, other keys kept; Secrets keeps
// them.
func TestRecordRedactsSecretMetadata(t *testing.T) {
	for _, keep := range []bool{false, true} {
		file := filepath.Join(t.TempDir(), "calls.jsonl")
		f, err := os.Create(file)
		if err != nil {
			t.Fatal(err)
		}
		rec := record.New(f)
		rec.Secrets = keep
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		a, stop := grpcanytest.Serve(ln, true, grpc.ChainUnaryInterceptor(rec.Unary))
		o := grpcany.Options{Method: "grpc.testing.TestService/UnaryCall", Data: `{"responseStatus":{"message":"Bearer S_msgtok"}}`,
			Metadata: []string{"x-tenant: t1", "authorization: Bearer S_tok", "x-api-key: S_key", "cookie: sid=S_cookie", "accesstoken: S_camel", "x-forwarded-authorization: Bearer S_fwd", "x-upstream: Bearer S_basic",
				"x-original-uri: /reset/S_path3f9a7c0e5b1d4a2c?x=1", "x-billing: sk_live_S_prefix51HqLyjWDarjtT1"}}
		o.URL = a.Addr
		sc, err := grpcany.New(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		lo := load.Options{}
		lo.Concurrency, lo.Requests = 1, 2
		if _, err := load.Run(context.Background(), lo, sc); err != nil {
			t.Fatal(err)
		}
		sc.Close()
		stop()
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		got := string(b)
		// The request messages too (base64 protobuf in "bin").
		for _, ln := range strings.Split(strings.TrimSpace(got), "\n") {
			var l struct{ Bin string }
			if json.Unmarshal([]byte(ln), &l) == nil && l.Bin != "" {
				if m, err := base64.StdEncoding.DecodeString(l.Bin); err == nil {
					got += "\n" + string(m)
				}
			}
		}
		if !strings.Contains(got, `"x-tenant":"t1"`) {
			t.Errorf("secrets %v: x-tenant not kept:\n%s", keep, got)
		}
		if !keep && !strings.Contains(got, `"x-original-uri":"/reset/REDACTED?x=1"`) {
			t.Errorf("a path in metadata: its credential not REDACTED, or the rest not kept:\n%s", got)
		}
		for _, s := range []string{"S_tok", "S_key", "S_cookie", "S_fwd", "S_basic", "S_msgtok", "S_path", "S_prefix"} {
			if strings.Contains(got, s) != keep {
				t.Errorf("secrets %v: the recording holds %q: %v\n%s", keep, s, !keep, got)
			}
		}
	}
}
