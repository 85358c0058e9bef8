package report

import (
	"bytes"
	"fmt"
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

// A study keeps each cell's slowest requests over its trials: the report
// lists them per cell, the slowest of all trials first, trials merged.
func TestStudySlowestPerCell(t *testing.T) {
	r := &results.Study{Cells: []results.Cell{{ID: "g/a", Group: "g", Label: "a"}, {ID: "g/b", Group: "g", Label: "b"}}}
	start := time.Date(2026, 11, 27, 17, 0, 0, 0, time.UTC)
	ms := time.Millisecond
	for i := range 2 {
		for _, c := range []string{"g/a", "g/b"} {
			tr := opTrialRPS(c, i, 100)
			lat := time.Duration(10*(i+1)) * ms // trial 1 is slower
			if c == "g/b" {
				lat += 100 * ms
			}
			tr.Load.Exemplars = &results.Exemplars{Slowest: []results.Exemplar{
				{TraceID: fmt.Sprintf("%032x", 100*i+len(c)+int(lat/ms)), Op: "get", Start: start, Latency: lat, Status: "200"},
			}}
			r.Trials = append(r.Trials, tr)
		}
	}
	g := Build(r).Groups[0]
	if s := g.Cells[0].Slowest; s == nil || len(s.Slowest) != 1 || s.Slowest[0].Latency != 20*ms {
		t.Fatalf("cell a's slowest: %+v, want trial 1's 20ms", s)
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, Build(r)); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	i := strings.Index(out, "Slowest requests: g")
	if i < 0 {
		t.Fatalf("no per-cell slowest section:\n%s", out)
	}
	sec := out[i:]
	for _, want := range []string{"| a | 20.00ms", "| b | 120.0ms"} {
		if !strings.Contains(sec, want) {
			t.Errorf("slowest section lacks %q:\n%s", want, sec)
		}
	}
}
