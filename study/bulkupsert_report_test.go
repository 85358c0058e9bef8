package study

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/*.golden")

// readBulk reads a real quick run's results (docs/figures/2026-11-23:
// 100k records, 2 trials per cell, RSS samples cut to three per trial).
func readBulk(t *testing.T) *BulkResults {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "bulk-quick.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r BulkResults
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// TestBulkReportGolden: the bulk-upsert report in the other reports'
// shape, from a real quick run; -update rewrites the golden file.
func TestBulkReportGolden(t *testing.T) {
	var buf bytes.Buffer
	BulkMarkdown(&buf, readBulk(t))
	path := filepath.Join("testdata", "bulk-quick.md.golden")
	if *updateGolden {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./study -run TestBulkReportGolden -update creates it)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		got := filepath.Join(t.TempDir(), "bulk-quick.md")
		os.WriteFile(got, buf.Bytes(), 0o644)
		t.Errorf("report differs from %s; got is in %s", path, got)
	}
}

// TestBulkReportShape: a 100k quick run is titled by its own count, says
// it is quick before anything else, asks its question and answers it in
// one line before the table, and claims no difference two trials cannot
// show.
func TestBulkReportShape(t *testing.T) {
	var buf bytes.Buffer
	BulkMarkdown(&buf, readBulk(t))
	md := buf.String()
	lines := strings.Split(md, "\n")
	if !strings.HasPrefix(lines[0], "# 100k airports into SQLite") || strings.Contains(md, "1M airports") {
		t.Errorf("title %q: want the run's count", lines[0])
	}
	order := []string{"> **Quick run** (100,000 records", "**Question:**", "**Answer:** Cannot tell with 2 trials per cell", "## Findings", "| cell |", "## Goals", "## Warnings"}
	at := -1
	for _, w := range order {
		i := strings.Index(md, w)
		if i < 0 || i < at {
			t.Fatalf("%q missing or out of order in:\n%s", w, md)
		}
		at = i
	}
	if strings.Index(md, "Quick run") > strings.Index(md, "**Question:**") {
		t.Error("the quick-run notice comes after the question")
	}
	for _, bad := range []string{"(p=0.", "significant in"} {
		if strings.Contains(md, bad) {
			t.Errorf("two trials per cell, yet the report says %q", bad)
		}
	}
	if !strings.Contains(md, "json, streaming against buffered: cannot decide with 2 trials (need 4+): peak RSS 0.43×") {
		t.Errorf("no finding for json's streaming against buffered memory:\n%s", md)
	}
}

// TestBulkReportSignificant: with enough trials the same findings carry
// p-values and the answer counts the formats where the test decided.
func TestBulkReportSignificant(t *testing.T) {
	r := readBulk(t)
	for _, c := range r.Cells {
		for len(c.Trials) < 6 { // the same two trials, thrice: far apart cells separate fully
			c.Trials = append(c.Trials, c.Trials[len(c.Trials)%2])
		}
	}
	r.Trials = 6
	var buf bytes.Buffer
	BulkMarkdown(&buf, r)
	md := buf.String()
	for _, want := range []string{"peak RSS 0.43× [", "(p=0.00", "significant in 5 of 5 formats", "(6 trials)"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "Cannot tell") {
		t.Errorf("6 trials, yet 'Cannot tell':\n%s", md)
	}
}

// TestBulkOptionsKeepTheirShape: the typed options write what the map they
// replaced wrote (same keys, same order, the seed's every digit), so files
// written before read and compare the same.
func TestBulkOptionsKeepTheirShape(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "bulk-quick.json"))
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Options json.RawMessage `json:"options"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := json.Compact(&want, raw.Options); err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(readBulk(t).Options)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("options written as\n%s\nwant\n%s", got, want.Bytes())
	}
}
