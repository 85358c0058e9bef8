package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/load/grpcany/grpcanytest"
)

// TestLoadGRPCCLI calls grpc-go's own TestService from the command line:
// by reflection, from .proto files and a protoset, each call checked and
// counted by the server too.
func TestLoadGRPCCLI(t *testing.T) {
	srv := grpcanytest.Start(t, true)
	dir := t.TempDir()
	file := grpcanytest.WriteProtos(t, dir)
	lines := filepath.Join(dir, "reqs.jsonl")
	os.WriteFile(lines, []byte(`{"response_size": 1, "response_status": {"message": "a{{.N}}"}}`+"\n"+`{"response_size": 1, "response_status": {"message": "b{{.N}}"}}`+"\n"), 0o644)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"reflection", []string{"--data", `{"response_size": 2, "response_status": {"message": "r{{.N}}"}}`, "--expect", `payload.body=="AAA="`}},
		{"proto", []string{"--proto", file, "--import-path", dir, "--data-file", lines, "-H", "x-who: cli"}},
		{"bidi", []string{"--grpc", "grpc.testing.TestService/FullDuplexCall", "--messages", "3", "--data", `{"response_parameters": [{"size": 1}], "response_status": {"message": "s{{.N}}.{{.I}}"}}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := srv.Calls.Load()
			args := append([]string{"load", "-q", "--grpc", "grpc.testing.TestService/UnaryCall", "-c", "2", "-n", "50"}, tc.args...)
			code, out, errOut := runLoadCLI(t, append(args, srv.Addr)...)
			if code != 0 || !strings.Contains(out, "failed 0 (0.00%)") || srv.Calls.Load()-before != 50 {
				t.Fatalf("exit %d, %d calls served\n%s%s", code, srv.Calls.Load()-before, out, errOut)
			}
			t.Log(out)
		})
	}
	if ids, most := srv.IDs(); ids != 50+50+150 || most != 1 {
		t.Fatalf("server saw %d distinct ids (most %d times); want %d once each", ids, most, 250)
	}
}

// TestLoadGRPCProtocols: --protocol grpc-web and connect against
// connect-go handlers serving the same TestService, bytes by layer.
func TestLoadGRPCProtocols(t *testing.T) {
	srv := grpcanytest.StartConnect(t)
	dir := t.TempDir()
	file := grpcanytest.WriteProtos(t, dir)
	for _, p := range []string{"grpc-web", "connect"} {
		code, out, errOut := runLoadCLI(t, "load", "-q", "--grpc", "grpc.testing.TestService/UnaryCall", "--protocol", p, "--proto", file, "--import-path", dir,
			"--data", `{"response_size": 2}`, "--expect", `payload.body=="AAA="`, "-c", "2", "-n", "40", srv.Addr)
		if code != 0 || !strings.Contains(out, "failed 0 (0.00%)") || !strings.Contains(out, "bytes per request by layer") {
			t.Fatalf("--protocol %s: exit %d\n%s%s", p, code, out, errOut)
		}
		t.Log(out)
	}
	if n := srv.Calls.Load(); n != 80 {
		t.Fatalf("server counted %d calls, want 80", n)
	}
}

// TestLoadGRPCBadInput: each mistake is one line and exit 2, before any
// call reaches the service.
func TestLoadGRPCBadInput(t *testing.T) {
	srv := grpcanytest.Start(t, true)
	bare := grpcanytest.Start(t, false)
	dir := t.TempDir()
	broken := filepath.Join(dir, "broken.proto")
	os.WriteFile(broken, []byte("syntax = \"proto3\";\nservice S {\n  rpc M(A) returns (A);\n}\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--grpc", "grpc.testing.TestService/Nope", srv.Addr}, "service grpc.testing.TestService has no method Nope (methods: "},
		{[]string{"--grpc", "no.Such/Method", srv.Addr}, "unknown service no.Such on " + srv.Addr},
		{[]string{"--grpc", "x.S/M", "--proto", broken, srv.Addr}, "--proto does not compile: broken.proto:3:9: "},
		{[]string{"--grpc", "grpc.testing.TestService/UnaryCall", "--data", `{"nope": 1}`, srv.Addr}, `--data does not fit grpc.testing.SimpleRequest: (line 1:2): unknown field "nope"`},
		{[]string{"--grpc", "grpc.testing.TestService/UnaryCall", "--data", `{"response_size": true}`, srv.Addr}, "invalid value for int32 field responseSize: true"},
		{[]string{"--grpc", "grpc.testing.TestService/UnaryCall", bare.Addr}, bare.Addr + " refused server reflection"},
		{[]string{"--data", "{}", srv.Addr}, "--data applies to --grpc pkg.Service/Method"},
		{[]string{"--grpc", "grpc.testing.TestService/UnaryCall", "--scenario", "echo", srv.Addr}, "--grpc METHOD runs on its own"},
	} {
		before := srv.Calls.Load() + bare.Calls.Load()
		code, out, errOut := runLoadCLI(t, append([]string{"load", "-q", "-n", "5"}, tc.args...)...)
		first, _, _ := strings.Cut(errOut, "\n")
		if code != 2 || !strings.Contains(first, tc.want) || srv.Calls.Load()+bare.Calls.Load() != before {
			t.Errorf("%v: exit %d, want 2 and a line with %q, no call\n%s%s", tc.args, code, tc.want, out, errOut)
		}
	}
}

// TestCapacityGRPC: the capacity search runs a --grpc method with the
// load's flags, its steps on the same scenario, every call counted by the
// server.
func TestCapacityGRPC(t *testing.T) {
	srv := grpcanytest.Start(t, true)
	code, stdout, errs := runLoadCLI(t, "capacity", "--slo", "p99<2s", "--start-rate", "20", "--max-rate", "40",
		"--step-duration", "300ms", "--warmup", "100ms", "--no-confirm",
		"--grpc", "grpc.testing.TestService/UnaryCall", "--data", `{"response_size": 1, "response_status": {"message": "{{.N}}"}}`, "--expect", `payload.body=="AA=="`, srv.Addr)
	if code != 0 || !strings.Contains(stdout, "every rate up to --max-rate met it") || strings.Count(errs, "step ") != 2 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, errs)
	}
	if ids, most := srv.IDs(); int64(ids) != srv.Calls.Load() || most != 1 || ids < 20 {
		t.Fatalf("%d calls, %d distinct ids (most %d times): want every call its own id", srv.Calls.Load(), ids, most)
	}
}
