package study

import (
	"context"
	"flag"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirebench/wirebench/load/grpcany/grpcanytest"
)

// testGRPCServerEnv makes the test binary grpc-go's interop TestService
// (with server reflection) on -addr, for the grpc: cells.
const testGRPCServerEnv = "WIREBENCH_STUDY_TEST_GRPC_SERVER"

func testGRPCServer(args []string) error {
	fs := flag.NewFlagSet("testgrpcserver", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	_, stop := grpcanytest.Serve(ln, true)
	defer stop()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	return nil
}

// A study file whose cells call a gRPC method of a server nobody here
// wrote: by reflection, and from a .proto file beside the study file,
// unary and server-streaming, every call checked.
func TestStudyFileGRPCCells(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers and runs load; skipped with -short")
	}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	grpcanytest.WriteProtos(t, dir)
	study := strings.ReplaceAll(`
name: g
trials: 1
warmup: 100ms
duration: 400ms
server:
  command: ["{bin}", "-addr", "127.0.0.1:{port}"]
  ready: "tcp://127.0.0.1:{port}"
  env: {`+testGRPCServerEnv+`: "1"}
cells:
  - name: reflection
    load: {url: "127.0.0.1:{port}", grpc: grpc.testing.TestService/UnaryCall, concurrency: 2,
           data: '{"response_size": 2, "response_status": {"message": "{{.N}}"}}', expect: 'payload.body=="AAA="', headers: {x-cell: a}}
  - name: proto
    load: {url: "127.0.0.1:{port}", grpc: grpc.testing.TestService/StreamingOutputCall, proto: grpc/testing/test.proto, import_paths: ., concurrency: 2,
           data: '{"response_parameters": [{"size": 1}, {"size": 1}]}', expect: ['payload.body=="AA=="']}
`, "{bin}", bin)
	os.WriteFile(filepath.Join(dir, "study.yaml"), []byte(study), 0o644)
	def, err := ParseFile(filepath.Join(dir, "study.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Run(ctx, def, Options{Seed: 1, Ports: testPorts()})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, tr := range res.Trials {
		if tr.Error != "" {
			t.Fatalf("trial %s %d: %s", tr.Cell, tr.Index, tr.Error)
		}
		l := tr.Load
		if l.Failed != 0 || l.Requests == 0 || !strings.HasPrefix(l.Scenario, "grpc grpc.testing.TestService/") {
			t.Fatalf("trial %s: scenario %s, %d of %d failed: %v", tr.Cell, l.Scenario, l.Failed, l.Requests, l.Failures)
		}
		if tr.Cell == "g/proto" && (l.Stream == nil || l.Stream.Items != 2*l.Stream.Exchanges) {
			t.Fatalf("proto cell: stream %+v, want 2 replies per call", l.Stream)
		}
		seen[tr.Cell] = true
	}
	if !seen["g/reflection"] || !seen["g/proto"] {
		t.Fatalf("cells run: %v", seen)
	}
}

// A grpc: load with a problem the file alone shows is an error of the
// study file, with its line.
func TestStudyFileGRPCErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	grpcanytest.WriteProtos(t, dir)
	for _, tc := range []struct{ load, want string }{
		{`{url: "127.0.0.1:{port}", grpc: grpc.testing.TestService/UnaryCall, proto: grpc/testing/test.proto, import_paths: ., data: '{"nope": 1}'}`,
			`load: --data does not fit grpc.testing.SimpleRequest: (line 1:2): unknown field "nope"`},
		{`{url: "127.0.0.1:{port}", grpc: grpc.testing.TestService/Nope, proto: grpc/testing/test.proto, import_paths: .}`,
			"service grpc.testing.TestService has no method Nope"},
		{`{url: "127.0.0.1:{port}", grpc: Nope}`, `load.grpc: "Nope": want pkg.Service/Method`},
		{`{url: "127.0.0.1:{port}", grpc: a.B/C, protocol: http}`, `load.protocol: "http": want grpc, grpc-web or connect`},
		{`{url: "127.0.0.1:{port}", grpc: a.B/C, method: POST}`, "load.method: does not apply to a grpc: method"},
		{`{url: "127.0.0.1:{port}", grpc: a.B/C, proto: a.proto, protoset: a.pb}`, "proto and protoset exclude each other"},
		{`{url: "127.0.0.1:{port}", grpc: a.B/C, data: "{}", data_file: d.jsonl}`, "data and data_file exclude each other"},
	} {
		text := "name: x\nserver: {command: [./srv, \"{port}\"]}\nload: " + tc.load + "\ncells: [{name: a}]\n"
		_, err := Parse(filepath.Join(dir, "s.yaml"), []byte(text), os.ReadFile)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.load, err, tc.want)
		}
	}
}
