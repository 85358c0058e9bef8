package grpcany_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/grpcany"
	"github.com/wirebench/wirebench/load/grpcany/grpcanytest"
	"github.com/wirebench/wirebench/results"
)

const unary = "grpc.testing.TestService/UnaryCall"

// run runs n calls of o's method on c VUs and checks the outcome against
// the server's own count: every call answered OK and checked, as many as
// the server handled.
func run(t *testing.T, srv *grpcanytest.Server, o grpcany.Options, n int64, c int) *results.Load {
	t.Helper()
	if o.URL == "" {
		o.URL = srv.Addr
	}
	sc, err := grpcany.New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	before := srv.Calls.Load()
	res, err := load.Run(context.Background(), load.Options{Options: results.Options{Concurrency: c, Requests: n}}, sc)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != n || res.Failed != 0 {
		t.Fatalf("%d requests, %d failed (%v); want %d, none failed", res.Requests, res.Failed, res.Failures, n)
	}
	if got := srv.Calls.Load() - before; got != n {
		t.Fatalf("the server counted %d calls, we %d", got, n)
	}
	if res.Conn == nil || res.Conn.URL != srv.Addr && res.Conn.URL != "http://"+srv.Addr && res.Conn.URL != "https://"+srv.Addr {
		t.Fatalf("conn %+v: want the target", res.Conn)
	}
	if len(res.Ops) != 1 || res.Ops[0].Name != sc.Method().Name() || res.Ops[0].Latency.Count() != n {
		t.Fatalf("ops %+v: want one, the method's, with %d latencies", res.Ops, n)
	}
	return res
}

// TestUnaryByReflection calls UnaryCall of grpc-go's own TestService,
// found by server reflection, on both clients: every call checked (the
// payload the server sends back), the server's count equal to ours, every
// templated id seen once, the metadata on every call.
func TestUnaryByReflection(t *testing.T) {
	srv := grpcanytest.Start(t, true)
	for i, client := range []string{conn.ClientLean, conn.ClientStd} {
		t.Run(client, func(t *testing.T) {
			o := grpcany.Options{Method: unary,
				Data:     `{"response_size": 4, "response_status": {"message": "` + client + `-{{.N}}"}}`,
				Expect:   []string{`payload.body=="AAAAAA=="`, `payload.type==COMPRESSABLE`},
				Metadata: []string{"X-Run: " + client}}
			o.Client = client
			res := run(t, srv, o, 300, 4)
			if ids, most := srv.IDs(); ids != 300*(i+1) || most != 1 {
				t.Fatalf("server saw %d distinct ids (most %d times each); want %d once each", ids, most, 300*(i+1))
			}
			if got := srv.Metadata("x-run=" + client); got != 300 {
				t.Fatalf("%d calls carried the metadata, want 300", got)
			}
			if res.Bytes.BodyIn != 300*(4+2+2) { // payload{body: 4 bytes}: tag, length, tag, length, 4
				t.Fatalf("body in %d, want %d", res.Bytes.BodyIn, 300*8)
			}
			if res.Bytes.WireIn <= res.Bytes.BodyIn || res.Bytes.WireOut <= res.Bytes.BodyOut {
				t.Fatalf("wire bytes %+v: want more than the bodies", res.Bytes)
			}
		})
	}
}

// TestUnaryFromProtoFiles calls a server without reflection, from .proto
// files a user wrote (two, one importing the other by its import path),
// and from a protoset of grpc-go's own descriptors.
func TestUnaryFromProtoFiles(t *testing.T) {
	srv := grpcanytest.Start(t, false)
	dir := t.TempDir()
	file := grpcanytest.WriteProtos(t, dir)
	set := filepath.Join(dir, "test.protoset")
	grpcanytest.WriteProtoset(t, set)
	data := `{"response_size": 2, "response_status": {"message": "{{.N}}"}}`
	run(t, srv, grpcany.Options{Method: unary, Protos: []string{file}, ImportPaths: []string{dir}, Data: data}, 100, 2)
	run(t, srv, grpcany.Options{Method: "grpc.testing.TestService.UnaryCall", Protoset: set, Data: data}, 100, 2)
	if ids, most := srv.IDs(); ids != 100 || most != 2 {
		t.Fatalf("server saw %d distinct ids (at most %d times); want 100, twice each (two runs)", ids, most)
	}
}

// TestStreams calls the TestService's server, client and bidi streams.
func TestStreams(t *testing.T) {
	srv := grpcanytest.Start(t, true)
	for _, tc := range []struct {
		method, data string
		expect       []string
		items        int64 // replies per call
		messages     int64 // requests per call
	}{
		{"StreamingOutputCall", `{"response_parameters": [{"size": 3}, {"size": 3}, {"size": 3}], "response_status": {"message": "s{{.N}}"}}`,
			[]string{`payload.body=="AAAA"`}, 3, 1},
		{"StreamingInputCall", `{"payload": {"body": "AAAA"}}`, []string{"aggregated_payload_size==15"}, 1, 5},
		{"FullDuplexCall", `{"response_parameters": [{"size": 1}], "response_status": {"message": "b{{.N}}.{{.I}}"}}`, nil, 5, 5},
	} {
		t.Run(tc.method, func(t *testing.T) {
			msgs := srv.Messages.Load()
			res := run(t, srv, grpcany.Options{Method: "grpc.testing.TestService/" + tc.method, Data: tc.data, Expect: tc.expect, Messages: 5}, 40, 3)
			if got := srv.Messages.Load() - msgs; got != 40*tc.messages {
				t.Fatalf("server read %d messages, want %d", got, 40*tc.messages)
			}
			if res.Stream == nil || res.Stream.Exchanges != 40 || res.Stream.Items != 40*tc.items {
				t.Fatalf("stream section %+v: want 40 exchanges of %d replies", res.Stream, tc.items)
			}
		})
	}
	if ids, most := srv.IDs(); ids != 40+40*5 || most != 1 {
		t.Fatalf("server saw %d distinct ids (most %d times); want %d once each", ids, most, 40+40*5)
	}
}

// TestFailedChecksCount: a response that fails --expect, a status that
// is not OK, a call past its deadline, a request that its template cannot
// make for this number (request 0 was checked before the run): each a
// counted failure with its reason, on every path (lean and grpc-go unary
// calls, streams).
func TestFailedChecksCount(t *testing.T) {
	srv := grpcanytest.Start(t, true)
	const notFit = `{"response_size": {{if .N}}"x"{{else}}1{{end}}}`
	const noField = `{"response_size": {{if .N}}{{.Nope}}{{else}}1{{end}}}`
	const streamNotFit = `{"payload": {"body": {{if .I}}1{{else}}"AA=="{{end}}}}`
	for _, tc := range []struct {
		method, client, data string
		expect               []string
		timeout              time.Duration
		fail                 string
		n                    int64 // failures of 20
	}{
		{"UnaryCall", "", `{"response_size": 1}`, []string{`payload.body!="AA=="`}, 0, `check: payload.body!="AA=="`, 20},
		{"UnaryCall", "std", `{"response_size": 1}`, []string{`payload.body=="AB=="`}, 0, `check: payload.body=="AB=="`, 20},
		{"UnaryCall", "", `{"response_status": {"code": 5, "message": "gone"}}`, nil, 0, "grpc NotFound", 20},
		{"UnaryCall", "", `{"response_size": -1}`, nil, 0, "grpc Unknown", 20},
		{"UnaryCall", "", notFit, nil, 0, "request: does not fit grpc.testing.SimpleRequest", 19},
		{"UnaryCall", "std", notFit, nil, 0, "request: does not fit grpc.testing.SimpleRequest", 19},
		{"UnaryCall", "", noField, nil, 0, "request: template failed", 19},
		{"StreamingInputCall", "", streamNotFit, nil, 0, "request: does not fit grpc.testing.StreamingInputCallRequest", 20},
		{"FullDuplexCall", "", `{"response_parameters": [{"size": {{if .I}}"x"{{else}}1{{end}}}]}`, nil, 0, "request: does not fit grpc.testing.StreamingOutputCallRequest", 20},
		{"StreamingOutputCall", "", `{"response_parameters": [{"size": 1}, {"size": 1, "interval_us": 300000}]}`, nil, 50 * time.Millisecond, "timeout", 20},
		{"StreamingOutputCall", "", `{"response_parameters": [{"size": 1}, {"size": 2}]}`, []string{`payload.body=="AA=="`}, 0, `check: payload.body=="AA=="`, 20},
	} {
		o := grpcany.Options{Method: "grpc.testing.TestService/" + tc.method, Data: tc.data, Expect: tc.expect, Messages: 3}
		o.URL, o.Client, o.Timeout = srv.Addr, tc.client, tc.timeout
		sc, err := grpcany.New(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		res, err := load.Run(context.Background(), load.Options{Options: results.Options{Concurrency: 2, Requests: 20}}, sc)
		if err != nil {
			t.Fatal(err)
		}
		if res.Failed != tc.n || res.Failures[tc.fail] != tc.n {
			t.Errorf("%s %s %s: %d failed, by reason %v; want %d %q", tc.method, tc.client, tc.data, res.Failed, res.Failures, tc.n, tc.fail)
		}
	}
}

// TestBadInput: each mistake a user makes is one line naming it, an
// options error, before any call of the method.
func TestBadInput(t *testing.T) {
	with := grpcanytest.Start(t, true)
	without := grpcanytest.Start(t, false)
	dir := t.TempDir()
	file := grpcanytest.WriteProtos(t, dir)
	broken := filepath.Join(dir, "broken.proto")
	os.WriteFile(broken, []byte("syntax = \"proto3\";\npackage x;\nmessage A {\n  strin name = 1;\n}\n"), 0o644)
	for _, tc := range []struct {
		name string
		o    grpcany.Options
		want string
	}{
		{"unknown service", grpcany.Options{Method: "grpc.testing.Nope/UnaryCall"}, "unknown service grpc.testing.Nope on " + with.Addr + " (services: grpc.reflection.v1.ServerReflection, grpc.reflection.v1alpha.ServerReflection, grpc.testing.TestService)"},
		{"unknown method", grpcany.Options{Method: "grpc.testing.TestService/Nope"}, "service grpc.testing.TestService has no method Nope (methods: EmptyCall, UnaryCall,"},
		{"unknown method in a file", grpcany.Options{Method: "grpc.testing.TestService/Nope", Protos: []string{file}, ImportPaths: []string{dir}}, "has no method Nope (methods: UnaryCall, StreamingOutputCall, StreamingInputCall, FullDuplexCall)"},
		{"unknown service in a file", grpcany.Options{Method: "a.B/C", Protos: []string{file}, ImportPaths: []string{dir}}, "unknown service a.B in " + file + " (services: grpc.testing.TestService)"},
		{"no method", grpcany.Options{Method: "UnaryCall"}, `--grpc "UnaryCall": want pkg.Service/Method`},
		{"proto does not compile", grpcany.Options{Method: "x.S/M", Protos: []string{broken}}, "--proto does not compile: broken.proto:4:3: "},
		{"missing proto", grpcany.Options{Method: "x.S/M", Protos: []string{filepath.Join(dir, "none.proto")}}, "--proto: stat "},
		{"unknown field", grpcany.Options{Method: unary, Data: `{"id": "{{.N}}"}`}, `--data does not fit grpc.testing.SimpleRequest: (line 1:2): unknown field "id"`},
		{"wrong type", grpcany.Options{Method: unary, Data: `{"response_size": "x{{.N}}"}`}, `--data does not fit grpc.testing.SimpleRequest: (line 1:19): invalid value for int32 field responseSize: "x0"`},
		{"bad template", grpcany.Options{Method: unary, Data: `{"response_size": {{.Nope}}}`}, `--data does not fit grpc.testing.SimpleRequest: template: --data:1:20: executing "--data" at <.Nope>: can't evaluate field Nope`},
		{"bad expect", grpcany.Options{Method: unary, Expect: []string{"payload.size==1"}}, "--expect \"payload.size==1\": grpc.testing.Payload has no field size"},
		{"reflection refused", grpcany.Options{Method: unary, Options: conn.Options{URL: without.Addr}}, without.Addr + " refused server reflection (v1: Unimplemented, v1alpha: Unimplemented): name the method's files with --proto or --protoset"},
		{"bad metadata", grpcany.Options{Method: unary, Metadata: []string{"nocolon"}}, `-H "nocolon": want 'key: value'`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.o.URL == "" {
				tc.o.URL = with.Addr
			}
			before := with.Calls.Load() + without.Calls.Load()
			_, err := grpcany.New(context.Background(), tc.o)
			if !errors.Is(err, grpcany.ErrOptions) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v\nwant one line, an options error, with %q", err, tc.want)
			}
			if n := with.Calls.Load() + without.Calls.Load() - before; n != 0 {
				t.Fatalf("%d calls reached the service", n)
			}
		})
	}
}

// TestUnreachable: reflection against a closed port is the run's
// failure, not a usage error.
func TestUnreachable(t *testing.T) {
	_, err := grpcany.New(context.Background(), grpcany.Options{Method: unary, Options: conn.Options{URL: testkit.RefusedAddr(t), Timeout: 2 * time.Second}})
	if !errors.Is(err, grpcany.ErrUnreachable) || errors.Is(err, grpcany.ErrOptions) {
		t.Fatalf("got %v, want ErrUnreachable", err)
	}
}

// TestProtocols calls the same TestService, served by connect-go handlers
// around grpc-go's own implementation, over gRPC, gRPC-Web and Connect:
// every call checked, the server's count equal to ours, every templated id
// seen once, bytes split by layer on the browsers' protocols.
func TestProtocols(t *testing.T) {
	srv := grpcanytest.StartConnect(t)
	dir := t.TempDir()
	file := grpcanytest.WriteProtos(t, dir)
	for _, p := range []string{grpcany.GRPC, grpcany.GRPCWeb, grpcany.Connect} {
		t.Run(p, func(t *testing.T) {
			o := grpcany.Options{Method: unary, Protos: []string{file}, ImportPaths: []string{dir}, Protocol: p,
				Data:     `{"response_size": 3, "response_status": {"message": "` + p + `-{{.N}}"}}`,
				Expect:   []string{`payload.body=="AAAA"`},
				Metadata: []string{"x-protocol: " + p}}
			res := run(t, srv, o, 100, 3)
			if got := srv.Metadata("x-protocol=" + p); got != 100 {
				t.Fatalf("%d calls carried the metadata, want 100", got)
			}
			if p != grpcany.GRPC && (res.Layers == nil || res.Layers.In.Message < res.Bytes.BodyIn || res.Layers.In.Total() != res.Bytes.WireIn) {
				t.Fatalf("layers %+v, bytes %+v: want the message layer to hold the bodies, the layers to sum to the wire", res.Layers, res.Bytes)
			}
			o.Method, o.Expect = "grpc.testing.TestService/StreamingOutputCall", []string{`payload.body=="AA=="`}
			o.Data = `{"response_parameters": [{"size": 1}, {"size": 1}], "response_status": {"message": "` + p + `-s{{.N}}"}}`
			res = run(t, srv, o, 30, 3)
			if res.Stream == nil || res.Stream.Items != 60 {
				t.Fatalf("stream %+v: want 60 replies", res.Stream)
			}
		})
	}
	if ids, most := srv.IDs(); ids != 3*130 || most != 1 {
		t.Fatalf("server saw %d distinct ids (most %d times); want %d once each", ids, most, 3*130)
	}
	o := grpcany.Options{Method: "grpc.testing.TestService/FullDuplexCall", Protos: []string{file}, ImportPaths: []string{dir}, Protocol: grpcany.GRPCWeb}
	o.URL = srv.Addr
	if _, err := grpcany.New(context.Background(), o); !errors.Is(err, grpcany.ErrOptions) || !strings.Contains(err.Error(), "--protocol grpc-web carries unary and server-streaming methods only") {
		t.Fatalf("bidi over grpc-web: %v", err)
	}
	o.Method = "grpc.testing.TestService/StreamingInputCall"
	if _, err := grpcany.New(context.Background(), o); !errors.Is(err, grpcany.ErrOptions) {
		t.Fatalf("client stream over grpc-web: %v", err)
	}
}

// TestConnectStreams: Connect's client streams (HTTP/1.1) and bidi calls
// (HTTP/2: h2c with prior knowledge) against connect-go handlers, every
// message counted by the server as by us.
func TestConnectStreams(t *testing.T) {
	srv := grpcanytest.StartConnect(t)
	dir := t.TempDir()
	file := grpcanytest.WriteProtos(t, dir)
	connectStreams(t, srv, grpcany.Options{Protos: []string{file}, ImportPaths: []string{dir}})
}

func connectStreams(t *testing.T, srv *grpcanytest.Server, o grpcany.Options) {
	t.Helper()
	o.Protocol, o.Messages = grpcany.Connect, 4
	ids0, _ := srv.IDs()
	for _, tc := range []struct {
		method, data, transport string
		expect                  []string
		items                   int64
	}{
		{"StreamingInputCall", `{"payload": {"body": "AAAA"}}`, "http1", []string{"aggregated_payload_size==12"}, 1},
		{"FullDuplexCall", `{"response_parameters": [{"size": 2}, {"size": 2}], "response_status": {"message": "bi{{.N}}.{{.I}}"}}`, "h2", []string{`payload.body=="AAA="`}, 8},
	} {
		t.Run(tc.method, func(t *testing.T) {
			o.Method, o.Data, o.Expect = "grpc.testing.TestService/"+tc.method, tc.data, tc.expect
			msgs := srv.Messages.Load()
			res := run(t, srv, o, 30, 3)
			if got := srv.Messages.Load() - msgs; got != 30*4 {
				t.Fatalf("server read %d messages, want %d", got, 30*4)
			}
			if res.Stream == nil || res.Stream.Exchanges != 30 || res.Stream.Items != 30*tc.items {
				t.Fatalf("stream section %+v: want 30 exchanges of %d replies", res.Stream, tc.items)
			}
			if !strings.HasPrefix(res.Conn.Transport, tc.transport) || res.Layers == nil || res.Layers.Out.Message < res.Bytes.BodyOut || res.Layers.In.Total() != res.Bytes.WireIn {
				t.Fatalf("conn %+v layers %+v bytes %+v: want %s, the message layer holding the bodies, the layers summing to the wire", res.Conn, res.Layers, res.Bytes, tc.transport)
			}
		})
	}
	if ids, most := srv.IDs(); ids-ids0 != 30*4 || most != 1 { // the bidi requests' (a client stream's have no id field)
		t.Fatalf("server saw %d new distinct ids (most %d times); want %d once each", ids-ids0, most, 30*4)
	}
}
