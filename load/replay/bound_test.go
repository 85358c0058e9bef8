package replay

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/wirebench/wirebench/internal/testkit"
)

// harEntryURL is a HAR entry whose URL is u.
func harEntryURL(u string) string {
	return `{"startedDateTime": "2026-11-24T10:00:00.000Z", "request": {"method": "GET", "url": "` + u + `"}, "response": {"status": 200}}`
}

// TestHAREntryBound: an entry past the bound is skipped and counted as
// it streams by, and the entries after it are read.
func TestHAREntryBound(t *testing.T) {
	doc := `{"log": {"entries": [` + harEntryURL("http://a/1") + ",\n" + harEntryURL("http://a/"+strings.Repeat("x", 5000)) + ",\n" + harEntryURL("http://a/3") + `]}}`
	src, err := NewSource(strings.NewReader(doc), "x.har", "", FieldMap{})
	if err != nil {
		t.Fatal(err)
	}
	src.(*harReader).max = 1000
	got := drain(t, src)
	if len(got) != 2 || got[1].Target != "http://a/3" {
		t.Fatalf("got %+v", got)
	}
	if bad := src.Malformed(); bad.N != 1 || !strings.Contains(bad.Examples[0], "entry longer than 1000 bytes: skipped") {
		t.Fatalf("malformed %+v", bad)
	}
}

// TestOversizedEntriesBoundedMemory: a recording holding one entry (or
// line) of 100 MB, in every format, is read by the built binary in
// bounded memory (a HAR URL of 100 MB took 754 MB and 300 MB ran out of
// memory; 40 MiB here): the entry is skipped, counted, and the run, below 99% of its
// recording, exits 1 without printing it. Under a 4 GB address-space cap.
func TestOversizedEntriesBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 100 MB files")
	}
	bin := testkit.Binary(t)
	prl, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("no prlimit")
	}
	dir := t.TempDir()
	for _, c := range []struct{ name, format, head, tail string }{
		{"x.har", "har", `{"log": {"entries": [` + harEntryURL("http://a/1") + ",\n" + `{"startedDateTime": "2026-11-24T10:00:00.000Z", "request": {"method": "GET", "url": "http://a/`,
			`"}, "response": {"status": 200}},` + "\n" + harEntryURL("http://a/3") + `]}}`},
		{"x.log", "combined", `1.2.3.4 - - [24/Nov/2026:10:00:00 +0000] "GET /1 HTTP/1.1" 200 1 "-" "-"` + "\n" +
			`1.2.3.4 - - [24/Nov/2026:10:00:00 +0000] "GET /`, ` HTTP/1.1" 200 1 "-" "-"` + "\n"},
		{"x.jsonl", "jsonl", `{"time": 1795514400, "method": "GET", "path": "/1"}` + "\n" + `{"time": 1795514400, "method": "GET", "path": "/`, `"}` + "\n"},
		{"x.wb", "wirebench", `{"wirebench":"requests/v1"}` + "\n" + `{"t":1,"m":"GET","u":"/1"}` + "\n" + `{"t":2,"m":"GET","u":"/`, `"}` + "\n"},
	} {
		t.Run(c.format, func(t *testing.T) {
			// Written in pieces: the test's own memory stays small, as a
			// child's max RSS starts from its parent's at fork.
			path := filepath.Join(dir, c.name)
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			chunk := bytes.Repeat([]byte("a"), 1<<20)
			f.WriteString(c.head)
			for range 40 { // a 40 MiB URL
				f.Write(chunk)
			}
			f.WriteString(c.tail)
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			defer os.Remove(path)
			cmd := exec.Command(prl, "--as=4294967296", bin, "replay", "-q", "--dry-run", "--format", c.format, path, "--target", "http://127.0.0.1:1")
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			err = cmd.Run()
			rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss // KiB
			t.Logf("max RSS %d MiB; %v", rss>>10, err)
			if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(errb.String(), "replay: partial") {
				t.Errorf("exit %d, want 1 (partial)\n%s\n%s", code, out.String(), errb.String())
			}
			if !strings.Contains(out.String(), "longer than 16777216 bytes") {
				t.Errorf("the entry is not counted as too large:\n%s", out.String())
			}
			if out.Len()+errb.Len() > 1<<20 {
				t.Errorf("printed %d bytes", out.Len()+errb.Len())
			}
			if rss > 160<<10 {
				t.Errorf("max RSS %d MiB, want under 160", rss>>10)
			}
		})
	}
}
