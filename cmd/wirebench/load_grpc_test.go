package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
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

// TestLoadGRPCTLS: --tls with a host:port target (and https://), the CA
// and the client certificate the server requires from files, over gRPC
// and Connect.
func TestLoadGRPCTLS(t *testing.T) {
	certs := grpcanytest.NewTLS(t, true)
	srv := grpcanytest.StartTLS(t, true, certs.Server)
	web := grpcanytest.StartConnectTLS(t, certs.Server)
	dir := t.TempDir()
	file := grpcanytest.WriteProtos(t, dir)
	tlsArgs := []string{"--cacert", certs.CA, "--cert", certs.ClientCert, "--key", certs.ClientKey}
	for _, tc := range []struct {
		name   string
		srv    *grpcanytest.Server
		args   []string
		target string
	}{
		{"tls flag", srv, []string{"--tls"}, srv.Addr},
		{"https", srv, nil, "https://" + srv.Addr},
		{"connect", web, []string{"--protocol", "connect", "--proto", file, "--import-path", dir}, "https://" + web.Addr},
	} {
		before := tc.srv.Calls.Load()
		args := append([]string{"load", "-q", "--grpc", "grpc.testing.TestService/UnaryCall", "--data", `{"response_size": 2}`, "--expect", `payload.body=="AAA="`, "-c", "2", "-n", "30"}, tlsArgs...)
		code, out, errOut := runLoadCLI(t, append(append(args, tc.args...), tc.target)...)
		if code != 0 || !strings.Contains(out, "failed 0 (0.00%)") || tc.srv.Calls.Load()-before != 30 {
			t.Fatalf("%s: exit %d, %d calls served\n%s%s", tc.name, code, tc.srv.Calls.Load()-before, out, errOut)
		}
	}
	code, _, errOut := runLoadCLI(t, "load", "-q", "--grpc", "grpc.testing.TestService/UnaryCall", "--cacert", certs.CA, "-n", "1", srv.Addr)
	if code != 2 || !strings.Contains(errOut, "use https://"+srv.Addr) {
		t.Fatalf("--cacert with a plaintext target: exit %d, %s", code, errOut)
	}
}

// TestReplayGRPCCLI: wirebench replay of a recording of gRPC calls
// against grpc-go's own TestService, by reflection and from a .proto file:
// every call sent and checked, the server's count equal to ours.
func TestReplayGRPCCLI(t *testing.T) {
	srv := grpcanytest.Start(t, true)
	dir := t.TempDir()
	file := grpcanytest.WriteProtos(t, dir)
	rec := filepath.Join(dir, "calls.jsonl")
	var b strings.Builder
	for i := range 40 {
		fmt.Fprintf(&b, `{"t": %d, "grpc": "grpc.testing.TestService/UnaryCall", "data": {"response_size": 1, "response_status": {"message": "r%d"}}}`+"\n", 1764388800000+i, i)
	}
	b.WriteString(`{"t": 1764388800041, "grpc": "grpc.testing.TestService/UnaryCall", "bin": ""}` + "\n")
	os.WriteFile(rec, []byte(b.String()), 0o600)
	for _, args := range [][]string{nil, {"--proto", file, "--import-path", dir}} {
		before := srv.Calls.Load()
		code, out, errOut := runLoadCLI(t, append([]string{"replay", "-q", rec, "--target", srv.Addr, "--speed", "4"}, args...)...)
		if code != 0 || !strings.Contains(out, "failed 0 (0.00%)") || srv.Calls.Load()-before != 41 || !strings.Contains(out, "41 of the recording's 41") {
			t.Fatalf("replay %v: exit %d, %d calls served\n%s%s", args, code, srv.Calls.Load()-before, out, errOut)
		}
		t.Log(out)
	}
	if ids, most := srv.IDs(); ids != 40 || most != 2 {
		t.Fatalf("server saw %d distinct ids (most %d times); want 40, twice each", ids, most)
	}
	code, _, errOut := runLoadCLI(t, "replay", "-q", rec, "--target", srv.Addr, "--drop-header", "x")
	if code != 2 || !strings.Contains(errOut, "HTTP replay's") {
		t.Fatalf("--drop-header: exit %d, %s", code, errOut)
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
	// The steps' offered rates: 20/s and 40/s (a step judged disturbed on
	// a busy machine is measured again: its rate twice).
	var rates []string
	for _, l := range strings.Split(errs, "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[0] == "step" && !slices.Contains(rates, f[2]) {
			rates = append(rates, f[2])
		}
	}
	if code != 0 || !strings.Contains(stdout, "every rate up to --max-rate met it") || !slices.Equal(rates, []string{"20.0/s", "40.0/s"}) {
		t.Fatalf("exit %d, steps at %v, want 20.0/s and 40.0/s\nstdout %s\nstderr %s", code, rates, stdout, errs)
	}
	if ids, most := srv.IDs(); int64(ids) != srv.Calls.Load() || most != 1 || ids < 20 {
		t.Fatalf("%d calls, %d distinct ids (most %d times): want every call its own id", srv.Calls.Load(), ids, most)
	}
}

// TestPeerGhzAnyMethod calls grpc-go's TestService by reflection with the
// same templated request from ghz and from wirebench --grpc, one after
// the other, each as its own process: the server counts exactly each
// one's calls, every id once, and the two clients' CPU per call is logged
// side by side (a figure, not a check: the machine is shared).
func TestPeerGhzAnyMethod(t *testing.T) {
	testkit.NeedPeers(t) // slow: CI's peer step (docs/testing.md)
	ghz := testkit.NeedTool(t, "ghz", "go install github.com/bojand/ghz/cmd/ghz@latest")
	bin := testkit.Binary(t)
	srv := grpcanytest.Start(t, true)
	const n = 3000
	cpu := map[string]time.Duration{}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"ghz", []string{ghz, "--insecure", "--call", "grpc.testing.TestService.UnaryCall", "-d", `{"response_size": 4, "response_status": {"message": "ghz-{{.RequestNumber}}"}}`,
			"-n", strconv.Itoa(n), "-c", "4", "--connections", "1", "--format", "json", srv.Addr}},
		{"wirebench", []string{bin, "load", "-q", "--grpc", "grpc.testing.TestService/UnaryCall", "--data", `{"response_size": 4, "response_status": {"message": "wb-{{.N}}"}}`,
			"--expect", `payload.body=="AAAAAA=="`, "-n", strconv.Itoa(n), "-c", "4", "--conns", "1", "--out", "-", srv.Addr}},
	} {
		before := srv.Calls.Load()
		cmd := exec.Command(c.args[0], c.args[1:]...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, out)
		}
		if got := srv.Calls.Load() - before; got != n {
			t.Fatalf("%s: the server counted %d calls, want %d", c.name, got, n)
		}
		if c.name == "ghz" {
			var rep struct {
				Count          int            `json:"count"`
				StatusCodeDist map[string]int `json:"statusCodeDistribution"`
			}
			if err := json.Unmarshal(out, &rep); err != nil || rep.Count != n || rep.StatusCodeDist["OK"] != n {
				t.Fatalf("ghz report: %v %+v", err, rep)
			}
		} else if !strings.Contains(string(out), fmt.Sprintf(`"requests":%d,`, n)) || !strings.Contains(string(out), `"failed":0,`) {
			t.Fatalf("wirebench result lacks %d requests, 0 failed:\n%.600s", n, out)
		}
		cpu[c.name] = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if ids, most := srv.IDs(); ids != 2*n || most != 1 {
		t.Fatalf("server saw %d distinct ids (most %d times); want %d once each", ids, most, 2*n)
	}
	t.Logf("client CPU per call (whole process, %d calls, c=4): wirebench %v, ghz %v: %.2f×",
		n, cpu["wirebench"]/n, cpu["ghz"]/n, float64(cpu["wirebench"])/float64(cpu["ghz"]))
}
