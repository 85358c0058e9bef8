package study

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/bulk"
	"github.com/wirebench/wirebench/internal/testkit"
)

// TestBulkUpsertStudyEndToEnd runs a tiny bulk-upsert study: every cell
// uploads into a fresh server and database (distinct PIDs), every table is
// checked against the generator, the reference cell ran sqlite3 .import,
// RSS was sampled, and the report and plot files are written.
func TestBulkUpsertStudyEndToEnd(t *testing.T) {
	testkit.NeedPeers(t) // slow: CI's peer step (docs/testing.md)
	testkit.NeedTool(t, "sqlite3", "apt-get install -y sqlite3")
	bin := testkit.Binary(t)
	res, err := RunBulkUpsert(context.Background(), BulkOptions{
		Options: Options{Trials: 2, Binary: bin, Seed: 1, Ports: testPorts()},
		Records: 3000, Formats: []string{bulk.FormatJSON, bulk.FormatTOON},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cells) != 5 {
		t.Fatalf("%d cells", len(res.Cells))
	}
	pids := map[int]bool{}
	for _, c := range res.Cells {
		if len(c.Trials) != 2 {
			t.Fatalf("%s: %d trials", c.ID(), len(c.Trials))
		}
		for _, tr := range c.Trials {
			if tr.Error != "" || !tr.Verified || tr.Rows != 3000 || tr.Checksum != res.Expected {
				t.Fatalf("%s: %+v", c.ID(), tr)
			}
			if pids[tr.ServerPID] || tr.ServerPID == 0 {
				t.Fatalf("%s: PID %d reused", c.ID(), tr.ServerPID)
			}
			pids[tr.ServerPID] = true
			// .import of 3000 rows may end before its first sample (even of
			// /proc at start); the servers are sampled while they run.
			if c.Mode != ModeImport && (tr.PeakRSS <= 0 || len(tr.Samples) == 0) || tr.Wall <= 0 || tr.ServerCPU < 0 {
				t.Fatalf("%s: not measured: %+v", c.ID(), tr)
			}
			if c.Mode != ModeImport && (tr.Upload == nil || tr.Upload.WireSent <= tr.Upload.BodyBytes) {
				t.Fatalf("%s: wire bytes %+v", c.ID(), tr.Upload)
			}
		}
	}
	dir := t.TempDir()
	if err := WriteBulk(dir, res); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	for _, want := range []string{"| stream json |", "| buffered toon |", "| sqlite3 .import (csv) |", "2/2 exact", "## Goals"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	page, _ := os.ReadFile(filepath.Join(dir, "report.html"))
	if strings.Count(string(page), "<svg") != 3 || !strings.Contains(string(page), "<polyline") {
		t.Errorf("report.html: want one RSS plot per format (json, toon, csv)")
	}
}
