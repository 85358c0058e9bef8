package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportAndMergeRefuseImpossibleResults: a result edited to say more
// failures than requests, or negative counts, is refused by report,
// compare and merge with the field named; a 1 GiB file is refused from
// its size, unread.
func TestReportAndMergeRefuseImpossibleResults(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(ts.Close)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	if code, _, errs := runCLI(t, "load", "-q", "-n", "5", "-c", "1", "--out", good, ts.URL); code != 0 {
		t.Fatalf("load: exit %d: %s", code, errs)
	}
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		field string
		value any
		want  string
	}{
		{"failed", 99, "failed: impossible result: 99 failures out of 5 requests"},
		{"requests", -1, "requests: impossible result: -1 is negative"},
		{"interrupted", -7, "interrupted: impossible result: -7 is negative"},
	} {
		var m map[string]any
		json.Unmarshal(data, &m)
		m[tc.field] = tc.value
		bad := filepath.Join(dir, tc.field+".json")
		b, _ := json.Marshal(m)
		if err := os.WriteFile(bad, b, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"report", bad}, {"compare", good, bad}, {"merge", "--unchecked", bad}} {
			code, out, errs := runCLI(t, args...)
			if code != 1 || out != "" || !strings.Contains(errs, bad) || !strings.Contains(errs, tc.want) {
				t.Errorf("wirebench %v: exit %d, want 1 and %q; stdout %q stderr %q", args, code, tc.want, out, errs)
			}
		}
	}
	huge := filepath.Join(dir, "huge.json")
	if err := os.WriteFile(huge, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, 1<<30); err != nil { // sparse: no disk, and never read
		t.Fatal(err)
	}
	for _, args := range [][]string{{"report", huge}, {"merge", huge}} {
		code, _, errs := runCLI(t, args...)
		if code != 1 || !strings.Contains(errs, "1073741824 bytes, more than the limit of 256 MiB") {
			t.Errorf("wirebench %v: exit %d, stderr %q", args, code, errs)
		}
	}
}
