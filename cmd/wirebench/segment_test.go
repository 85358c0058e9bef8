package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/results"
)

func quietServer(t *testing.T) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	t.Cleanup(ts.Close)
	return ts.URL + "/"
}

// TestMergeChecksOneTest: segments written into one directory merge from
// it; a missing, duplicated or differently run segment is refused with
// the file named; thresholds recorded by the segments fail the merge.
func TestMergeChecksOneTest(t *testing.T) {
	t.Parallel()
	url := quietServer(t)
	dir := filepath.Join(t.TempDir(), "results") + "/" // created by load
	seg := func(i int, extra ...string) {
		t.Helper()
		args := append([]string{"load", "-q", "-n", "30", "-c", "3", "--segment", fmt.Sprintf("%d/3", i), "--threshold", "rps>1000000000", "--out", dir}, extra...)
		code, out, errs := runCLI(t, append(args, url)...)
		if code != 0 || !strings.Contains(out, "evaluated by wirebench merge") {
			t.Fatalf("segment %d: exit %d (a segment does not judge the test's thresholds)\n%s%s", i, code, out, errs)
		}
	}
	for i := 1; i <= 3; i++ {
		seg(i)
	}
	s1, s2 := filepath.Join(dir, "segment-1-of-3.json"), filepath.Join(dir, "segment-2-of-3.json")
	code, out, errs := runCLI(t, "merge", dir)
	if code != exitThreshold || !strings.Contains(errs, "✗ rps>1000000000") {
		t.Fatalf("merge of the directory: exit %d, want %d\n%s", code, exitThreshold, errs)
	}
	m, err := results.ReadLoad(strings.NewReader(out))
	if err != nil || m.Requests != 30 || m.Options.Requests != 30 || m.Options.Concurrency != 3 {
		t.Fatalf("merged: %v, %d requests, options %+v", err, m.Requests, m.Options)
	}
	if code, _, errs := runCLI(t, "merge", "--threshold", "errors<1%", "--threshold", "rps>0", "--unchecked", s1, s2); code != exitThreshold || !strings.Contains(errs, "✓ errors<1%") {
		t.Errorf("extra thresholds: exit %d\n%s", code, errs)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing", []string{s1, s2}, "segments 3/3 missing (have 2 of 3)"},
		{"duplicate", []string{dir, s2}, "segment 2/3 is in both " + s2 + " and " + s2},
		{"stdin twice", []string{"-", "-"}, "given twice"},
		{"not a result", []string{filepath.Join(t.TempDir())}, "no *.json or *.jsonl result files"},
	} {
		if code, _, errs := runCLI(t, append([]string{"merge"}, tc.args...)...); code == 0 || !strings.Contains(errs, tc.want) {
			t.Errorf("%s: exit %d, want an error with %q\n%s", tc.name, code, tc.want, errs)
		}
	}
	// Segment 3 run again with another request count is not the same test.
	other := filepath.Join(t.TempDir(), "other") + "/"
	if code, _, errs := runCLI(t, "load", "-q", "-n", "31", "-c", "3", "--segment", "3/3", "--threshold", "rps>1000000000", "--out", other, url); code != 0 {
		t.Fatal(errs)
	}
	code, _, errs = runCLI(t, "merge", s1, s2, filepath.Join(other, "segment-3-of-3.json"))
	if code != 1 || !strings.Contains(errs, "were run with different options: requests 30 vs 31") || !strings.Contains(errs, s1) {
		t.Errorf("other options: exit %d\n%s", code, errs)
	}
}

// TestLoadOutStdout: --out - writes the result as one JSON line on
// stdout and the summary on stderr; merge reads such lines from stdin.
func TestLoadOutStdout(t *testing.T) {
	t.Parallel()
	url := quietServer(t)
	var lines bytes.Buffer
	for i := 1; i <= 2; i++ {
		code, out, errs := runCLI(t, "load", "-q", "-n", "20", "-c", "2", "--segment", fmt.Sprintf("%d/2", i), "--out", "-", url)
		if code != 0 || strings.Count(out, "\n") != 1 || !strings.Contains(errs, "requests") {
			t.Fatalf("segment %d: exit %d, stdout %d lines\n%s", i, code, strings.Count(out, "\n"), errs)
		}
		lines.WriteString(out)
	}
	var out, errs bytes.Buffer
	if code := run(context.Background(), &cliEnv{stdin: &lines, stdout: &out, stderr: &errs}, []string{"merge", "-"}); code != 0 {
		t.Fatalf("merge -: exit %d\n%s", code, errs.String())
	}
	if m, err := results.ReadLoad(&out); err != nil || m.Requests != 20 || len(m.Segments) != 2 {
		t.Errorf("merged from stdin: %v", err)
	}
}

// TestLoadStartFlags: usage errors of the synchronized-start flags, and a
// start already long past is a failure, not a burst.
func TestLoadStartFlags(t *testing.T) {
	t.Parallel()
	url := quietServer(t)
	past := fmt.Sprint(time.Now().Add(-time.Minute).Unix())
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--start-at", "tomorrow"}, 2, "--start-at"},
		{[]string{"--start-at", past, "--barrier", t.TempDir(), "--segment", "1/2"}, 2, "give one"},
		{[]string{"--barrier", t.TempDir()}, 2, "--barrier needs --segment"},
		{[]string{"--segment", "auto/0"}, 2, "--segment"},
		{[]string{"-r", "10", "--start-at", past}, 1, "passed"},
	} {
		code, _, errs := runCLI(t, append(append([]string{"load", "-q", "-n", "5"}, tc.args...), url)...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, want %d with %q\n%s", tc.args, code, tc.code, tc.want, errs)
		}
	}
	soon := time.Now().Add(300 * time.Millisecond).UTC()
	out := filepath.Join(t.TempDir(), "r.json")
	if code, _, errs := runCLI(t, "load", "-q", "-r", "100", "-n", "10", "--start-at", soon.Format(time.RFC3339Nano), "--out", out, url); code != 0 {
		t.Fatalf("--start-at: %s", errs)
	}
	if r := readLoad(t, out); !r.Start.Equal(soon) || r.Requests != 10 {
		t.Errorf("started %v, want %v; %d requests", r.Start, soon, r.Requests)
	}
}

// TestSegmentAuto: auto/n reads the Indexed Job's 0-based index.
func TestSegmentAuto(t *testing.T) {
	url := quietServer(t)
	t.Setenv(results.IndexEnv, "")
	os.Unsetenv(results.IndexEnv)
	if code, _, errs := runCLI(t, "load", "-q", "-n", "5", "--segment", "auto/2", url); code != 2 || !strings.Contains(errs, "JOB_COMPLETION_INDEX is not set") {
		t.Errorf("auto without the index: exit %d\n%s", code, errs)
	}
	t.Setenv(results.IndexEnv, "1")
	dir := t.TempDir()
	if code, _, errs := runCLI(t, "load", "-q", "-n", "5", "--segment", "auto/2", "--out", dir, url); code != 0 {
		t.Fatal(errs)
	}
	if r := readLoad(t, filepath.Join(dir, "segment-2-of-2.json")); r.Options.Segment != (results.Segment{I: 2, N: 2}) || r.Requests != 3 {
		t.Errorf("index 1 of 2: segment %v, %d requests; want 2/2 and 3 of 5", r.Options.Segment, r.Requests)
	}
}

// TestMergeWait: merge --wait, started before the segments end (a merge
// Job beside an Indexed Job), merges once the last one is written, and
// gives up after --wait naming the segments still missing.
func TestMergeWait(t *testing.T) {
	t.Parallel()
	url := quietServer(t)
	done := t.TempDir()
	for i := 1; i <= 2; i++ {
		if code, _, errs := runCLI(t, "load", "-q", "-n", "10", "-c", "2", "--segment", fmt.Sprintf("%d/2", i), "--out", done, url); code != 0 {
			t.Fatal(errs)
		}
	}
	dir := filepath.Join(t.TempDir(), "segments") // not there yet either
	go func() {
		time.Sleep(300 * time.Millisecond)
		os.MkdirAll(dir, 0o755)
		for _, f := range []string{"segment-1-of-2.json", "segment-2-of-2.json"} {
			b, _ := os.ReadFile(filepath.Join(done, f))
			os.WriteFile(filepath.Join(dir, "."+f), b, 0o644) // renamed in whole, as load --out writes
			os.Rename(filepath.Join(dir, "."+f), filepath.Join(dir, f))
			time.Sleep(300 * time.Millisecond)
		}
	}()
	code, out, errs := runCLI(t, "merge", "--wait", "20s", dir)
	if m, err := results.ReadLoad(strings.NewReader(out)); code != 0 || err != nil || m.Requests != 10 {
		t.Fatalf("merge --wait: exit %d, %v\n%s", code, err, errs)
	}
	half := t.TempDir()
	b, _ := os.ReadFile(filepath.Join(done, "segment-1-of-2.json"))
	os.WriteFile(filepath.Join(half, "segment-1-of-2.json"), b, 0o644)
	code, _, errs = runCLI(t, "merge", "--wait", "1500ms", half)
	if code != 1 || !strings.Contains(errs, "after waiting 1.5s") || !strings.Contains(errs, "segments 2/2 missing") {
		t.Errorf("timeout: exit %d\n%s", code, errs)
	}
	if code, _, errs := runCLI(t, "merge", "--wait", "1s", "-"); code != 2 {
		t.Errorf("--wait with stdin: exit %d\n%s", code, errs)
	}
}
