package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/httpapi"
	"github.com/wirebench/wirebench/payload"
	"github.com/wirebench/wirebench/server"
)

// TestBadDataFiles: a --data file that cannot be served is one line
// naming the place and why, exit 2, for study and serve alike, before
// any server starts or any results directory is made.
func TestBadDataFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	out := filepath.Join(dir, "out")
	for _, tc := range []struct {
		name, file, want string
		extra            []string
	}{
		{"missing", filepath.Join(dir, "nothere.json"), "no such file", nil},
		{"malformed", write("bad.json", "[{\"id\":1},\n{\"id\":2,}]"), "bad.json:2:", nil},
		{"int past 64 bits", write("big.json", `[{"id":1,"n":123456789012345678901234567890}]`), "big.json:1: record 0: json: $.n: ", nil},
		{"not records", write("num.json", `[1,2]`), "record 0 is a number", nil},
		{"no key", write("nokey.json", `[{"a":1.5},{"a":1.5}]`), "name the key with --data-key", nil},
		{"bad key", write("k.json", `[{"id":1}]`), "has no member \"sku\" (--data-key sku)", []string{"--data-key", "sku"}},
		{"schema lacks a field", write("s.json", `[{"id":1,"x":2}]`), "record 0: protobuf: does not fit R", []string{"--proto", write("r.proto", `syntax = "proto3"; message R { int64 id = 1; }`)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, args := range [][]string{
				append([]string{"study", "formats", "--data", tc.file, "--out", out}, tc.extra...),
				append([]string{"serve", "--http", "127.0.0.1:0", "--no-grpc", "--data", tc.file}, tc.extra...),
			} {
				code, _, stderr := runCLI(t, args...)
				if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
					t.Errorf("%s: exit %d, stderr %q; want 2 and one line with %q", args[0], code, stderr, tc.want)
				}
			}
		})
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a results directory was made for a study that could not start")
	}
}

// TestLoadRecordsOverH3CLI: `serve --data FILE --http3` serves the user's
// records over HTTP/1.1 and HTTP/3, and `load --scenario records --data
// FILE` drives them over both, every reply checked against the same file
// (protobuf with the file's schema): none failed. The count after each
// run (the server holds the file's records again) is part of the run.
func TestLoadRecordsOverH3CLI(t *testing.T) {
	const file, proto = "../../examples/data/shipments.json", "../../examples/data/shipments.proto"
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, &cliEnv{stdin: strings.NewReader(""), stdout: pw, stderr: io.Discard},
			[]string{"serve", "--http", "127.0.0.1:0", "--no-grpc", "--http3", "127.0.0.1:0", "--data", file, "--proto", proto, "--message", "ship.v1.Shipment"})
		pw.Close()
	}()
	t.Cleanup(func() { cancel(); <-done })
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, pr)
	m := regexp.MustCompile(`http=(\S+) .*h3=(\S+)`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("listening line %q", line)
	}
	ran := 0
	for _, tc := range [][]string{
		{"--format", "json", "http://" + m[1]},
		{"--format", "toon", "--transport", "h3", "-k", "https://" + m[2]},
		{"--format", "protobuf", "--proto", proto, "--message", "ship.v1.Shipment", "--transport", "h3", "-k", "https://" + m[2]},
	} {
		args := append([]string{"load", "-q", "--scenario", "records", "--data", file, "-c", "2", "-n", "40"}, tc...)
		code, out, errOut := runLoadCLI(t, args...)
		if code != 0 || !regexp.MustCompile(`requests\s+40\s`).MatchString(out) || !strings.Contains(out, "failed 0 (0.00%)") {
			t.Errorf("%v: exit %d\n%s%s", tc, code, out, errOut)
		}
		ran++
	}
	if ran != 3 {
		t.Fatalf("%d runs", ran)
	}
}

// TestLoadRecordsUsage: --scenario records without its file, or with a
// file the format cannot carry, is one line and exit 2; --data-key and
// --message belong to it.
func TestLoadRecordsUsage(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, []byte(`[{"id":1,"n":123456789012345678901234567890}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--scenario", "records"}, "--scenario records needs --data FILE"},
		{[]string{"--scenario", "records", "--data", big}, "big.json:1: record 0: json: $.n: "},
		{[]string{"--scenario", "crud", "--data-key", "sku"}, "--data-key and --message apply to --scenario records"},
		{[]string{"--scenario", "crud", "--data", big}, "--data applies to --grpc"},
	} {
		code, _, errOut := runLoadCLI(t, append(append([]string{"load", "-q", "-n", "1"}, tc.args...), "http://127.0.0.1:1")...)
		if code != 2 || !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestLoadGRPCRecordsCLI: with a schema, serve --data serves the records
// over gRPC too (wirebench.records.Records), found by server reflection:
// load --grpc calls it with no .proto, and its --expect checks a reply
// against the file (a wrong expectation fails every call).
func TestLoadGRPCRecordsCLI(t *testing.T) {
	ds, err := payload.LoadDatasetFile(context.Background(), "../../examples/data/shipments.json", "../../examples/data/shipments.proto", false, "ship.v1.Shipment", payload.DataOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.Start(context.Background(), server.Options{GRPCAddr: "127.0.0.1:0", NoHTTP: true, HTTP: httpapi.Options{Records: ds}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, tc := range []struct {
		expect string
		code   int
		want   string
	}{
		{`route.from=="DUB"`, 0, "failed 0 (0.00%)"},
		{`route.from=="OSL"`, 1, "failed 20 (100.00%)"},
	} {
		code, out, errOut := runLoadCLI(t, "load", "-q", "--grpc", "wirebench.records.Records/Get", "--data", `{"key":"1000"}`,
			"--expect", tc.expect, "-n", "20", "-c", "2", srv.GRPCAddr())
		if code != tc.code || !strings.Contains(out+errOut, tc.want) {
			t.Errorf("--expect %s: exit %d, want %d and %q:\n%s%s", tc.expect, code, tc.code, tc.want, out, errOut)
		}
	}
	// The records scenario over gRPC: every reply checked against the file.
	code, out, errOut := runLoadCLI(t, "load", "-q", "--scenario", "records", "--transport", "grpc", "--data", "../../examples/data/shipments.json",
		"--proto", "../../examples/data/shipments.proto", "--message", "ship.v1.Shipment", "-n", "40", "-c", "2", srv.GRPCAddr())
	if code != 0 || !regexp.MustCompile(`requests\s+40\s`).MatchString(out) || !strings.Contains(out, "failed 0 (0.00%)") {
		t.Errorf("--scenario records --transport grpc: exit %d\n%s%s", code, out, errOut)
	}
}

// TestCapacityRecordsCLI: capacity takes --scenario records with load's
// records flags. The file's default key would be name (its first unique
// member); the server keys by sku, and so does the search with --data-key
// sku: every reply checked, none failed, the SLO met. A key or message the
// file lacks is refused before any request, naming it; the flags apply to
// --scenario records only.
func TestCapacityRecordsCLI(t *testing.T) {
	file := filepath.Join(t.TempDir(), "parts.json")
	if err := os.WriteFile(file, []byte(`[{"name":"bolt","sku":"B-1","kg":0.5},{"name":"nut","sku":"N-2","kg":0.25},{"name":"washer","sku":"W-3","kg":0.125}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	ds, err := payload.LoadDatasetFile(context.Background(), file, "", false, "", payload.DataOptions{Key: "sku"})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.Start(context.Background(), server.Options{HTTPAddr: "127.0.0.1:0", NoGRPC: true, HTTP: httpapi.Options{Records: ds}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	url := "http://" + srv.HTTPAddr()
	capacity := func(extra ...string) []string {
		return append(append([]string{"capacity", "-q", "--slo", "p99<2s", "--slo", "errors<1%", "--start-rate", "20", "--max-rate", "40",
			"--step-duration", "300ms", "--warmup", "100ms", "--no-confirm"}, extra...), url)
	}
	code, stdout, errs := runCLI(t, capacity("--scenario", "records", "--data", file, "--data-key", "sku")...)
	if code != 0 || !strings.Contains(stdout, "every rate up to --max-rate met it") {
		t.Errorf("--data-key sku: exit %d\n%s%s", code, stdout, errs)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--scenario", "records", "--data", file, "--data-key", "part"}, "--data-key part"},
		{[]string{"--scenario", "records", "--data", file, "--format", "protobuf", "--proto", "../../examples/data/shipments.proto", "--message", "ship.v1.Nope"}, "ship.v1.Nope"},
		{[]string{"--scenario", "crud", "--data-key", "sku"}, "--data-key and --message apply to --scenario records"},
		{[]string{"--message", "ship.v1.Shipment"}, "--data-key and --message apply to --scenario records"},
	} {
		code, _, errs := runCLI(t, capacity(tc.args...)...)
		if code != 2 || !strings.Contains(errs, tc.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", tc.args, code, errs, tc.want)
		}
	}
}

// TestLoadRecordsSegmentsCLI: `load --scenario records --segment i/2`,
// both segments at once against one server (as docs/distributed.md runs
// them): each segment's VUs create their copies under keys of their own
// and its checks allow for the other's copies, so neither fails.
func TestLoadRecordsSegmentsCLI(t *testing.T) {
	const file = "../../examples/data/shipments.json"
	ds, err := payload.LoadDatasetFile(context.Background(), file, "", false, "", payload.DataOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.Start(context.Background(), server.Options{HTTPAddr: "127.0.0.1:0", NoGRPC: true, HTTP: httpapi.Options{Records: ds}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	type ran struct {
		code     int
		out, err string
	}
	res := make(chan ran, 2)
	for _, seg := range []string{"1/2", "2/2"} {
		go func() {
			code, out, errOut := runLoadCLI(t, "load", "-q", "--scenario", "records", "--data", file, "-c", "4", "-d", "700ms", "--segment", seg, "http://"+srv.HTTPAddr())
			res <- ran{code, out, errOut}
		}()
	}
	for range 2 {
		r := <-res
		if r.code != 0 || !strings.Contains(r.out, "failed 0 (0.00%)") {
			t.Errorf("a segment: exit %d\n%s%s", r.code, r.out, r.err)
		}
	}
	if ds.Len() != 60 {
		t.Errorf("the server holds %d records after the segments, want 60", ds.Len())
	}
}
