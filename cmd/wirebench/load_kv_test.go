package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/kv"
	"github.com/wirebench/wirebench/results"
	"github.com/wirebench/wirebench/server"
)

// TestLoadKVCLI drives the kv-* scenarios through the CLI against the
// reference server's RESP and HTTP faces, and refuses the flags that do
// not fit them.
func TestLoadKVCLI(t *testing.T) {
	t.Parallel()
	srv, err := server.Start(context.Background(), server.Options{HTTPAddr: "127.0.0.1:0", NoGRPC: true, RESPAddr: "127.0.0.1:0", KV: kv.Options{}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	resp, http := "redis://"+srv.RESPAddr(), "http://"+srv.HTTPAddr()
	out := filepath.Join(t.TempDir(), "kv.json")
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		contains string
	}{
		{"resp pipelined", []string{"--scenario", "kv-get", "-P", "16", "--keys", "500", "--value-size", "64", "-c", "4", "-n", "1600", "--out", out, resp}, 0, "requests      1600"},
		{"protocol from the URL", []string{"--scenario", "kv-set", "--keys", "500", "--value-size", "64", "-n", "100", http}, 0, "204×100"},
		{"http json", []string{"--scenario", "kv-mixed", "--protocol", "http-json", "--keys", "50", "--value-size", "64", "-n", "200", http}, 0, "requests      200"},
		{"no preload reads what was written", []string{"--scenario", "kv-get", "--no-preload", "--keys", "500", "--value-size", "64", "-n", "300", resp}, 0, "failed 0"},
		{"no preload, other size: every value wrong", []string{"--scenario", "kv-get", "--no-preload", "--keys", "500", "--value-size", "65", "-n", "30", resp}, 1, "check: wrong value"},
		{"pipelining is RESP only", []string{"--scenario", "kv-get", "--protocol", "http-raw", "-P", "4", "-n", "1", http}, 2, ""},
		{"pipelining is closed loop", []string{"--scenario", "kv-get", "-P", "4", "-r", "100", "-d", "1s", resp}, 2, ""},
		{"kv flags need a kv scenario", []string{"--scenario", "get", "--keys", "5", "-n", "1", http}, 2, ""},
		{"wrong scheme", []string{"--scenario", "kv-get", "--protocol", "resp", "-n", "1", http}, 2, ""},
		{"value size bound", []string{"--scenario", "kv-set", "--value-size", "99999999", "-n", "1", resp}, 2, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runLoadCLI(t, append([]string{"load", "-q"}, tc.args...)...)
			if code != tc.code || !strings.Contains(stdout+stderr, tc.contains) {
				t.Fatalf("exit %d (want %d), want %q in:\n%s%s", code, tc.code, tc.contains, stdout, stderr)
			}
		})
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := results.ReadLoad(f)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.Config["kv_options"])
	if res.Scenario != "kv-get" || !strings.Contains(string(b), `"pipeline":16`) || !strings.Contains(string(b), `"protocol":"resp"`) {
		t.Errorf("result: scenario %q, kv options %s", res.Scenario, b)
	}
}
