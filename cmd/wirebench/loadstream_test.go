package main

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/server"
)

// TestLoadStreamCLI runs stream kinds from the command line against the
// real server, and refuses bad combinations as usage errors.
func TestLoadStreamCLI(t *testing.T) {
	srv, err := server.Start(context.Background(), server.Options{HTTPAddr: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0", SeedUsers: 30, SeedTodos: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	url := "http://" + srv.HTTPAddr()
	for _, kind := range []string{"grpc-server-stream", "ndjson", "websocket", "tunnel-get"} {
		code, out, errOut := runLoadCLI(t, "load", "-q", "--stream", kind, "--grpc", srv.GRPCAddr(), "--messages", "10", "-c", "2", "-n", "6", url)
		if code != 0 || !strings.Contains(out, "failed 0 (0.00%)") || !strings.Contains(out, kind+":") || !strings.Contains(out, "bytes per exchange") {
			t.Errorf("--stream %s: exit %d\n%s%s", kind, code, out, errOut)
		}
	}
	// Segments of a stream run merge with their stream sections summed.
	dir := t.TempDir()
	var files []string
	for _, seg := range []string{"1/2", "2/2"} {
		f := filepath.Join(dir, strings.ReplaceAll(seg, "/", "of")+".json")
		if code, out, errOut := runLoadCLI(t, "load", "-q", "--stream", "ndjson", "-c", "2", "-n", "7", "--segment", seg, "--out", f, url); code != 0 {
			t.Fatalf("segment %s: exit %d\n%s%s", seg, code, out, errOut)
		}
		files = append(files, f)
	}
	code, out, errOut := runLoadCLI(t, append([]string{"merge", "--out", filepath.Join(dir, "merged.json")}, files...)...)
	if code != 0 || !regexp.MustCompile(`ndjson: +7 exchanges, 210 items`).MatchString(out) {
		t.Errorf("merge of stream segments: exit %d\n%s%s", code, out, errOut)
	}
	for _, args := range [][]string{
		{"load", "--stream", "nope", url},
		{"load", "--stream", "ndjson", "--browser", "connect", url},
		{"load", "--browser", "connect", "-c", "2", url},
	} {
		if code, _, errOut := runLoadCLI(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (usage)\n%s", args, code, errOut)
		}
	}
}
