package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/results"
)

// A single run's slowest requests are named in the Markdown and HTML
// reports: latency, status with its failure, start, client port and trace
// ID, slowest first; a run without exemplars has no such section.
func TestSlowestRequestsRendered(t *testing.T) {
	tr := opTrial("crud", 0, map[string]time.Duration{"get": time.Millisecond})
	start := time.Date(2026, 11, 27, 17, 0, 1, 250_000_000, time.UTC)
	tr.Load.Exemplars = &results.Exemplars{Slowest: []results.Exemplar{
		{TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", Op: "get", Start: start, Latency: 212 * time.Millisecond, Status: "200", Conn: 40123},
		{Op: "get", Start: start.Add(time.Second), Latency: 31 * time.Millisecond, Status: "none", Fail: "timeout"},
	}}
	rep := Build(results.FromLoad(tr.Load))
	var md, html bytes.Buffer
	if err := WriteMarkdown(&md, rep); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&html, rep); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"markdown": md.String(), "html": html.String()} {
		i := strings.Index(out, "Slowest requests")
		if i < 0 {
			t.Fatalf("%s: no slowest requests section", name)
		}
		sec := out[i:]
		for _, want := range []string{"212.0ms", "4bf92f3577b34da6a3ce929d0e0e4736", "40123", "17:00:01.250000", "none (timeout)"} {
			if !strings.Contains(sec, want) {
				t.Errorf("%s: slowest section lacks %q", name, want)
			}
		}
		if a, b := strings.Index(sec, "4bf92f35"), strings.Index(sec, "none (timeout)"); a > b {
			t.Errorf("%s: not slowest first", name)
		}
	}
	tr.Load.Exemplars = nil
	md.Reset()
	if err := WriteMarkdown(&md, Build(results.FromLoad(tr.Load))); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md.String(), "Slowest requests") {
		t.Error("a run without exemplars shows a slowest section")
	}
}
