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
	out2 := filepath.Join(t.TempDir(), "kv-mix.json")
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
		{"memtier's flags", []string{"--scenario", "kv-mixed", "--key-pattern", "Z:Z", "--key-zipf-exp", "0.99", "--ratio", "1:8:1",
			"--data-size-range", "10-200", "--expiry-range", "1-5", "--miss-ratio", "0.1", "--seed", "3", "-P", "4", "-c", "2", "-n", "2000", "--out", out2, resp},
			0, "hot keys      the top 100 took"},
		{"gaussian over a key range, http", []string{"--scenario", "kv-get", "--key-dist", "gaussian:100,20", "--key-minimum", "50", "--key-maximum", "149",
			"--data-size-list", "8:1,64:1", "-n", "300", http}, 0, "gaussian:100,20 over 100 keys"},
		{"zipf exponent needs zipf keys", []string{"--scenario", "kv-get", "--key-zipf-exp", "0.5", "-n", "1", resp}, 2, "--key-zipf-exp applies to Zipf keys"},
		{"one pattern for SET and GET", []string{"--scenario", "kv-get", "--key-pattern", "Z:R", "-n", "1", resp}, 2, "one pattern for SET and GET"},
		{"key-dist or key-pattern", []string{"--scenario", "kv-get", "--key-dist", "zipf", "--key-pattern", "Z", "-n", "1", resp}, 2, "give one"},
		{"a ratio is kv-mixed's", []string{"--scenario", "kv-get", "--ratio", "1:1", "-n", "1", resp}, 2, "use --scenario kv-mixed"},
		{"size range", []string{"--scenario", "kv-set", "--data-size-range", "5-4", "-n", "1", resp}, 2, "size range"},
		{"expire needs TTLs", []string{"--scenario", "kv-mixed", "--ratio", "1:1:0:1", "-n", "1", resp}, 2, "--expiry-range"},
		{"seed needs a kv scenario", []string{"--scenario", "get", "--seed", "3", "-n", "1", http}, 2, "--seed applies to the kv-* scenarios"},
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
	b, _ := json.Marshal(res.Config.KVOptions)
	if res.Scenario != "kv-get" || !strings.Contains(string(b), `"pipeline":16`) || !strings.Contains(string(b), `"protocol":"resp"`) {
		t.Errorf("result: scenario %q, kv options %s", res.Scenario, b)
	}
	f2, err := os.Open(out2)
	if err != nil {
		t.Fatal(err)
	}
	defer f2.Close()
	res, err = results.ReadLoad(f2)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(res.Config.KVOptions)
	for _, want := range []string{`"key_dist":{"pattern":"zipf","zipf_exp":0.99}`, `"ratio":{"set":1,"get":8,"del":1}`, `"sizes":{"min":10,"max":200}`, `"seed":3`, `"miss_ratio":0.1`, `"expiry_max":5000000000`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("kv options %s lack %s", b, want)
		}
	}
	if k := res.KV; k == nil || k.KeyDist != "zipf:0.99" || k.Seed != 3 || k.Requests != 2000 || k.Misses == 0 {
		t.Errorf("kv section %+v", res.KV)
	}
}
