package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
		{"int past 2^53", write("big.json", `[{"id":1,"n":9007199254740993}]`), "big.json:1: record 0: json: $.n: int past 2^53", nil},
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
