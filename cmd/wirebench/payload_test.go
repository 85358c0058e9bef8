package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/payload"
	"github.com/wirebench/wirebench/results"
)

func TestPayloadCommand(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "users.json")
	data := `[{"id":9007199254740993,"name":"Ada","score":1.0},{"id":2,"name":"Bob","score":2.5}]`
	if err := os.WriteFile(in, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "lab.json")
	code, stdout, stderr := runCLI(t, "payload", "--time", "1ms", "--compress", "gzip", "--out", out, in)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"2 samples", "json-fast", "json-compact", "toon", "cbor", "msgpack", "gzip",
		"int past 2^53", "9007199254740993", "9007199254740992", "protobuf left out: no schema", "no arrays of objects"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lab, err := results.ReadPayloadLab(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(lab.Rows) != 12 || lab.Input.Read != 2 {
		t.Errorf("--out: %d rows, %d samples; want 12 rows, 2 samples", len(lab.Rows), lab.Input.Read)
	}
	for _, format := range []string{"md", "html", "csv"} {
		code, stdout, stderr := runCLI(t, "report", "--format", format, out)
		if code != 0 || !strings.Contains(stdout, "9007199254740992") {
			t.Errorf("report --format %s: exit %d, %s\n%s", format, code, stderr, stdout)
		}
	}
}

func TestPayloadBadInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(in, []byte("{\"a\":1}\n{\"a\":2,}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "lab.json")
	code, stdout, stderr := runCLI(t, "payload", "--time", "0", "--out", out, in)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if code != 2 || stdout != "" || len(lines) != 1 || !strings.Contains(stderr, "bad.jsonl:2:8: want a member name") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 2, nothing, one line naming bad.jsonl:2:8", code, stdout, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("--out written on bad input: %v", err)
	}
	if code, _, stderr := runCLI(t, "payload", "--sample", "0", in); code != 2 || !strings.Contains(stderr, "--sample 0") {
		t.Errorf("--sample 0: exit %d, %q", code, stderr)
	}
}

func TestPayloadCommandProto(t *testing.T) {
	code, stdout, stderr := runCLI(t, "payload", "--time", "0", "--compress", "none",
		"--proto", "../../payload/testdata/order.proto", "--message", "shop.v1.Order", "../../payload/testdata/orders.jsonl")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"protobuf", "null vs missing", "zero dropped", "timestamp spelling"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "left out") {
		t.Errorf("protobuf left out with a schema:\n%s", stdout)
	}
	code, _, stderr = runCLI(t, "payload", "--time", "0", "--proto", "../../payload/testdata/order.proto", "../../payload/testdata/orders.jsonl")
	if code != 2 || !strings.Contains(stderr, "name one with --message") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("no --message: exit %d, %q", code, stderr)
	}
}

// Reading a large file shows how far it is: redrawn on a terminal, ended
// with the file; in a log, a line a tenth of the file, and the last.
func TestPayloadReadProgress(t *testing.T) {
	var log strings.Builder
	report, live := readProgress(&log, false)
	if live {
		t.Error("a log gets no live line")
	}
	size := int64(100 << 20)
	for read := int64(0); read <= size; read += 1 << 20 {
		report(payload.ReadProgress{File: "big.jsonl", Read: read, Size: size, Elapsed: time.Duration(read)})
	}
	report(payload.ReadProgress{File: "big.jsonl", Read: size, Size: size, Done: true})
	report(payload.ReadProgress{File: "small.jsonl", Read: 1 << 20, Size: 1 << 20, Done: true})
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) != 10 || !strings.Contains(lines[0], " 10%") || !strings.Contains(lines[8], " 90%") ||
		!strings.Contains(lines[9], "100%") || !strings.Contains(lines[9], "ETA done") || !strings.Contains(lines[4], "ETA ") {
		t.Errorf("log lines:\n%s", log.String())
	}
	var term strings.Builder
	report, live = readProgress(&term, true)
	report(payload.ReadProgress{File: "f.jsonl", Read: 5, Size: 10, Elapsed: time.Second})
	report(payload.ReadProgress{File: "f.jsonl", Read: 10, Size: 10, Elapsed: 2 * time.Second, Done: true})
	if got := term.String(); !live || strings.Count(got, "\r") != 2 || !strings.Contains(got, " 50%") || !strings.HasSuffix(got, "ETA done  0 samples\033[K\n") {
		t.Errorf("terminal: %q", got)
	}
}
