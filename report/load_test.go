package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/results"
)

// TestWriteLoadSections: the summary has the headline, then the record
// line, then the distribution asked for, in that order; without them,
// neither.
func TestWriteLoadSections(t *testing.T) {
	l := capLoad(100, 2*time.Millisecond)
	var plain, full bytes.Buffer
	if err := WriteLoad(&plain, l, LoadText{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteLoad(&full, l, LoadText{Record: "7 requests written to r.log", Percentiles: results.WrkPercentiles}); err != nil {
		t.Fatal(err)
	}
	p, f := plain.String(), full.String()
	rec, dist := strings.Index(f, "record        7 requests"), strings.Index(f, "99%")
	if !strings.HasPrefix(f, p) || rec < len(p) || dist < rec {
		t.Fatalf("want the plain summary, then the record, then the distribution:\n%s", f)
	}
	if strings.Contains(p, "record ") || strings.Contains(p, "99%") {
		t.Errorf("plain summary has a record or distribution:\n%s", p)
	}
}
