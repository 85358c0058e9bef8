package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/bulk"
	"github.com/wirebench/wirebench/store/sqlite"
)

func TestGenAirports(t *testing.T) {
	code, a, _ := runCLI(t, "gen", "airports", "-n", "50", "--format", "csv")
	_, b, _ := runCLI(t, "gen", "airports", "-n", "50", "--format", "csv")
	if code != 0 || a != b || strings.Count(a, "\n") != 51 || !strings.HasPrefix(a, "iata_code,name,city,country\n") {
		t.Fatalf("exit %d, deterministic %v:\n%.300s", code, a == b, a)
	}
	if code, out, _ := runCLI(t, "gen", "airports", "-n", "50", "--checksum"); code != 0 || strings.TrimSpace(out) != bulk.GeneratedChecksum(50).String() {
		t.Fatalf("checksum: %d %q", code, out)
	}
	if code, out, _ := runCLI(t, "gen", "airports", "--checksum-sql"); code != 0 || out != bulk.ChecksumSQL {
		t.Fatalf("checksum-sql: %d %q", code, out)
	}
	for _, args := range [][]string{
		{"gen"}, {"gen", "users"}, {"gen", "airports", "--format", "xml"}, {"gen", "airports", "-n", "-1"},
		{"gen", "airports", "extra"},
	} {
		if code, _, _ := runCLI(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// serve --sqlite FILE mounts POST /airports in front of the API and keeps
// the table in FILE; the API is still served; fasthttp refuses --sqlite.
func TestServeSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "airports.db")
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		var errb strings.Builder
		done <- run(ctx, &cliEnv{stdin: strings.NewReader(""), stdout: pw, stderr: &errb}, []string{"serve", "--http", "127.0.0.1:0", "--no-grpc", "--sqlite", path})
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, pr)
	base := "http://" + regexp.MustCompile(`http=(\S+)`).FindStringSubmatch(line)[1]
	var body strings.Builder
	bulk.Generate(&body, bulk.FormatTOON, 100)
	resp, err := http.Post(base+"/airports", "text/toon", strings.NewReader(body.String()))
	if err != nil {
		t.Fatal(err)
	}
	reply, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(reply), `"inserted":100`) {
		t.Fatalf("%d %s", resp.StatusCode, reply)
	}
	// gen --post streams to the same route: all updates now; a bad URL path
	// is an error.
	if code, out, _ := runCLI(t, "gen", "airports", "-n", "100", "--format", "ndjson", "--post", base+"/airports", "--content-length"); code != 0 ||
		!strings.Contains(out, `HTTP 200`) || !strings.Contains(out, `"updated":100`) {
		t.Fatalf("gen --post: exit %d %s", code, out)
	}
	if code, _, _ := runCLI(t, "gen", "airports", "-n", "10", "--post", base+"/airports?mode=nonsense"); code != 1 {
		t.Fatalf("gen --post to a refusing server: exit %d, want 1", code)
	}
	if resp, err := http.Get(base + "/users/1"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("the API behind /airports: %v %v", resp, err)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("serve exited %d", code)
	}
	db, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if sum, _ := db.Checksum(); sum != bulk.GeneratedChecksum(100) {
		t.Fatalf("file holds %v", sum)
	}
	if code, _, errOut := runCLI(t, "serve", "--engine", "fasthttp", "--sqlite", path, "--http", "127.0.0.1:0", "--no-grpc"); code != 2 || !strings.Contains(errOut, "nethttp") {
		t.Fatalf("fasthttp with --sqlite: exit %d %s", code, errOut)
	}
}

func TestStudyBulkUpsertFlags(t *testing.T) {
	for _, args := range [][]string{
		{"study", "bulk-upsert", "--formats", "json,xml", "--out", t.TempDir()},
		{"study", "bulk-upsert", "--records", "-5", "--out", t.TempDir()},
	} {
		if code, _, errOut := runCLI(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, errOut)
		}
	}
}
