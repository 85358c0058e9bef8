package report

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// capLoad is a step's load: rate/s for 2 s, every request taking lat.
func capLoad(rate float64, lat time.Duration) *results.Load {
	l := &results.Load{Schema: results.LoadSchema, Scenario: "crud", Latency: measure.NewHistogram(), Service: measure.NewHistogram(),
		Lag: measure.NewHistogram(), Status: map[string]int64{"200": 1}, Failures: map[string]int64{}}
	l.Options.Rate, l.Options.Duration, l.Options.Concurrency, l.Options.Open = rate, 2*time.Second, 40, true
	l.Start = time.Unix(1000, 0)
	l.End, l.Window = l.Start.Add(2*time.Second), 2*time.Second
	l.Requests = int64(2 * rate)
	for range 100 {
		l.Latency.Record(lat)
		l.Service.Record(lat)
		l.Lag.Record(0)
	}
	return l
}

// capSearch is a finished search whose knee is at capacity: steps at
// 100, 400, 1600 and a bisection ending at capacity.
func capSearch(capacity float64, cpuPerReq time.Duration) *results.Capacity {
	c := &results.Capacity{Schema: results.CapacitySchema, Scenario: "crud", SLO: []string{"p99<20ms"}, Limit: results.LimitSLO,
		Rate: capacity, Low: capacity, High: capacity * 1.04, ServerCPUPerRequest: cpuPerReq}
	for _, r := range []float64{100, 400, 1600, capacity * 1.04, capacity} {
		lat, v := 2*time.Millisecond, results.StepPass
		if r > capacity {
			lat, v = 300*time.Millisecond, results.StepFail
		}
		s := results.NewCapacityStep(r, capLoad(r, lat))
		s.Verdict, s.Why = v, "why "+v
		c.Steps = append(c.Steps, s)
	}
	confirm := results.NewCapacityStep(capacity, capLoad(capacity, 3*time.Millisecond))
	confirm.Verdict = results.StepPass
	c.Confirm = &confirm
	return c
}

// capStudy has two cells of 5 trials: json near 1000/s, toon near 1300/s.
func capStudy() *results.Study {
	r := &results.Study{Schema: results.StudySchema, Study: "formats", Title: "formats",
		Cells: []results.Cell{{ID: "crud/json", Group: "crud", Label: "json", Baseline: true}, {ID: "crud/toon", Group: "crud", Label: "toon"}}}
	for k := range 5 {
		for _, c := range []struct {
			id   string
			rate float64
			cpu  time.Duration
		}{{"crud/json", 1000 + 10*float64(k), 500 * time.Microsecond}, {"crud/toon", 1300 + 10*float64(k), 370 * time.Microsecond}} {
			cp := capSearch(c.rate, c.cpu)
			r.Trials = append(r.Trials, results.Trial{Cell: c.id, Index: k, Load: cp.TrialLoad(), Capacity: cp})
		}
	}
	return r
}

func TestCapacityFinding(t *testing.T) {
	t.Parallel()
	rep := Build(capStudy())
	fs := rep.Groups[0].Findings()
	if len(fs) != 1 {
		t.Fatalf("findings %+v", fs)
	}
	want := "toon carries 1.29× json's load at p99<20ms ["
	if f := fs[0]; f.Verdict != Better || !strings.HasPrefix(f.Text, want) || !strings.Contains(f.Text, "(p=0.008, 5 trials), per core 1.35×") {
		t.Errorf("finding %v %q; want Better, %q…(p=0.008, 5 trials), per core 1.35×", f.Verdict, f.Text, want)
	}
	main := mainTable(rep.Groups[0])
	if main.Header[1] != "capacity" || main.Header[2] != "vs baseline" || main.Header[3] != "capacity/core" {
		t.Errorf("main table header %q: capacity should lead", main.Header)
	}
}

func TestCapacityFindingUndecidedAndLowerBound(t *testing.T) {
	t.Parallel()
	r := capStudy()
	r.Trials = r.Trials[:4] // 2 trials per cell
	r.Trials[1].Capacity.Limit = results.LimitClient
	fs := Build(r).Groups[0].Findings()
	if f := fs[0]; f.Verdict != Undecided || !strings.HasPrefix(f.Text, "cannot decide with 2+1 trials") ||
		!strings.Contains(f.Text, "1 of 2 of toon's trials excluded (the client was the limit)") {
		t.Errorf("finding %v %q", f.Verdict, f.Text)
	}
	r.Trials[3].Capacity.Limit = results.LimitMaxRate
	fs = Build(r).Groups[0].Findings()
	if f := fs[0]; !strings.Contains(f.Text, "toon's capacity is a lower bound in 1 of 2 trials (every rate up to --max-rate passed)") {
		t.Errorf("finding %v %q", f.Verdict, f.Text)
	}
}

// A cell whose every search the client limited has no capacity to
// compare: the finding says it cannot answer, and names no ratio.
func TestCapacityFindingClientBoundCannotAnswer(t *testing.T) {
	t.Parallel()
	r := capStudy()
	for i := range r.Trials {
		if r.Trials[i].Cell == "crud/toon" {
			r.Trials[i].Capacity.Limit = results.LimitClient
		}
	}
	rep := Build(r)
	f := rep.Groups[0].Findings()[0]
	if f.Verdict != NoData || !strings.Contains(f.Text, "toon vs json: cannot answer at p99<20ms") ||
		!strings.Contains(f.Text, "toon: 5 of 5 trials (the client was the limit)") || strings.Contains(f.Text, "carries") {
		t.Errorf("finding %v %q", f.Verdict, f.Text)
	}
	if _, ok := rep.Groups[0].Cells[1].Stat("capacity"); ok {
		t.Error("a client-bound capacity has a median")
	}
}

// Under a CPU quota, capacity per core is per core of the quota, and the
// report says which quota and why.
func TestCapacityQuotaReported(t *testing.T) {
	t.Parallel()
	r := capStudy()
	q := &results.CPUQuota{Cores: 0.5, Period: 2 * time.Millisecond, Source: results.QuotaCalibrated,
		ClientCPUPerRequest: 60 * time.Microsecond, ServerCPUPerRequest: 55 * time.Microsecond, ClientCPUs: 1}
	for i := range r.Trials {
		r.Trials[i].Capacity.ServerQuota = q
	}
	rep := Build(r)
	if s, _ := rep.Groups[0].Cells[0].Stat("capacity_per_core"); s.Center < 2000 || s.Center > 2100 {
		t.Errorf("json per core of 0.5 CPU: %v, want twice its capacity", s.Center)
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"CPU quota of 0.5 CPU (1ms per 2ms), chosen by calibration: the client spends 60µs of CPU per request on 1 CPU(s), the server 55µs",
		"per core of the quota", "| 0.5 CPU |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

func TestCapacityRenderers(t *testing.T) {
	t.Parallel()
	rep := Build(capStudy())
	var md, html, csvb bytes.Buffer
	for _, w := range []struct {
		f   func(*bytes.Buffer, *Report) error
		buf *bytes.Buffer
	}{
		{func(b *bytes.Buffer, r *Report) error { return WriteMarkdown(b, r) }, &md},
		{func(b *bytes.Buffer, r *Report) error { return WriteHTML(b, r) }, &html},
		{func(b *bytes.Buffer, r *Report) error { return WriteCSV(b, r) }, &csvb},
	} {
		if err := w.f(w.buf, rep); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"5 trials per cell, each a capacity search, interleaved", "### Capacity", "Load: open-loop capacity search at p99<20ms", "| json | 1 | 1,000/s | [1,000/s, 1,040/s) | p99<20ms | slo | yes |", "toon carries 1.29×"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	for _, want := range []string{"Latency against offered rate", "SLO p99&lt;20ms", "<title>json: capacity 1,020/s</title>", `fill="white" stroke=`} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("html lacks %q", want)
		}
	}
	rows, err := csv.NewReader(&csvb).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	steps := 0
	for _, row := range rows[1:] {
		switch row[0] {
		case "cell":
			if row[col["capacity_req_per_s"]] == "" {
				t.Errorf("cell row without capacity: %q", row)
			}
		case "step":
			steps++
			if row[col["offered_req_per_s"]] == "" || row[col["p99_ms"]] == "" || row[col["verdict"]] == "" {
				t.Errorf("step row lacks the curve: %q", row)
			}
		}
	}
	if steps != 2*5*6 { // 2 cells × 5 trials × (5 steps + confirmation)
		t.Errorf("%d step rows, want 60", steps)
	}
}

func TestCapacityCSVColumnsOnlyWithCapacity(t *testing.T) {
	t.Parallel()
	r := capStudy()
	for i := range r.Trials {
		r.Trials[i].Capacity = nil
	}
	var b bytes.Buffer
	if err := WriteCSV(&b, Build(r)); err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(b.String(), "\n")
	if strings.Contains(head, "capacity") || strings.Contains(head, "offered_req_per_s") {
		t.Errorf("a report without capacity has its columns: %s", head)
	}
}

func TestCompareCapacities(t *testing.T) {
	t.Parallel()
	old, new := results.FromCapacity(capSearch(1000, 0)), results.FromCapacity(capSearch(1030, 0))
	var b bytes.Buffer
	if err := WriteAB(&b, old, new); err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, Build(old)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "Capacity search, ") {
		t.Errorf("a capacity file's report does not say what it is:\n%s", md.String())
	}
	for _, want := range []string{"old: capacity 1,000/s at p99<20ms [1,000/s…1,040/s)", "change: new vs old 1.03× (+3.0%): the intervals overlap", "at each answer:", "p99"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("compare lacks %q:\n%s", want, b.String())
		}
	}
}

// A cell whose quota the study lowered (its search ended on the client's
// limit) compares with the others per core of its quota, and the report
// names each cell's quota.
func TestCapacityMixedQuotasComparePerCore(t *testing.T) {
	t.Parallel()
	r := capStudy()
	half := &results.CPUQuota{Cores: 0.5, Period: 2 * time.Millisecond, Source: results.QuotaCalibrated}
	low := &results.CPUQuota{Cores: 0.35, Period: 2 * time.Millisecond, Source: results.QuotaLowered, LoweredFrom: 0.5}
	for i := range r.Trials {
		tr := &r.Trials[i]
		tr.Capacity.ServerQuota = half
		if tr.Cell == "crud/toon" { // under 0.7 of json's quota, at 0.7 of the rate: the same per core
			tr.Capacity.ServerQuota = low
			tr.Capacity.Rate = 0.7 * (1000 + 10*float64(tr.Index))
		}
	}
	rep := Build(r)
	g := rep.Groups[0]
	if g.answerKey() != perCoreKey {
		t.Fatalf("answer metric %q, want %q", g.answerKey(), perCoreKey)
	}
	f := g.Findings()[0]
	if f.Verdict != Same || !strings.Contains(f.Text, "toon carries ~ json's load per core of its quota at p99<20ms (1.00×") {
		t.Errorf("finding %v %q", f.Verdict, f.Text)
	}
	main := mainTable(g)
	if main.Header[1] != "capacity/core" || main.Header[3] != "capacity" {
		t.Errorf("main table header %q: capacity per core should lead", main.Header)
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"different CPU quotas (json: 0.5 CPU; toon: 0.35 CPU (lowered from 0.5 CPU, under which the client was the limit))",
		"compare in capacity per core of their quotas"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// One quota for all: capacity leads again.
	for i := range r.Trials {
		r.Trials[i].Capacity.ServerQuota = half
	}
	if k := Build(r).Groups[0].answerKey(); k != capacityMetric {
		t.Errorf("one quota: answer metric %q", k)
	}
}
