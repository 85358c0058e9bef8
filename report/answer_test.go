package report

import (
	"bytes"
	"encoding/csv"
	"slices"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/report/reporttest"
	"github.com/wirebench/wirebench/results"
)

// TestAnswerLine: a yes/no question is answered in its own unit, from
// the named cell against its baseline, and says no more than the test
// does: "Yes"/"No" only when significant (or enough trials found no
// difference), "cannot tell" below that.
func TestAnswerLine(t *testing.T) {
	const cheaper = "Is TOON cheaper to serve than JSON?"
	tests := []struct {
		name     string
		opt      reporttest.Options
		want     []string
		wantNot  []string
		wantNone bool
	}{
		{"worse: no", reporttest.Options{Question: cheaper, Answer: results.Answer{Metric: "server_cpu_per_req", Cell: "toon"}},
			[]string{"No: 1.21× the server CPU per request of json [1.12…1.26] (p=0.005, 6 trials)."}, []string{"Yes"}, false},
		{"better: yes", reporttest.Options{Question: "Is protobuf smaller than JSON?", Answer: results.Answer{Metric: "recv_wire_per_req", Cell: "protobuf"}},
			[]string{"Yes: 0.56× the bytes per request of json"}, []string{"No"}, false},
		{"no difference", reporttest.Options{Question: "Is protobuf cheaper to serve than JSON?", Answer: results.Answer{Metric: "server_cpu_per_req", Cell: "protobuf"}},
			[]string{"No: no significant difference in server CPU per request from json (p=0.810, 6 trials)."}, []string{"×", "Yes"}, false},
		{"two trials: cannot tell", reporttest.Options{Trials: 2, Question: cheaper, Answer: results.Answer{Metric: "server_cpu_per_req", Cell: "toon"}},
			[]string{"Cannot tell with 2 trials (need 4+ per cell): 1.2", "× the server CPU per request of json observed ["}, []string{"Yes", "No", "p="}, false},
		{"yes when worse", reporttest.Options{Question: "Is TOON slower than JSON?", Answer: results.Answer{Metric: "rps", Cell: "toon", Yes: "worse"}},
			[]string{"Yes: 0.87× the req/s of json ["}, []string{"No"}, false},
		{"yes when worse, not worse", reporttest.Options{Question: "Is protobuf slower than JSON?", Answer: results.Answer{Metric: "rps", Cell: "protobuf", Yes: "worse"}},
			[]string{"No: no significant difference in req/s"}, []string{"Yes"}, false},
		{"not a yes/no question", reporttest.Options{Question: "How much CPU does TOON take?", Answer: results.Answer{Metric: "server_cpu_per_req", Cell: "toon"}},
			[]string{"1.21× the server CPU per request of json"}, []string{"Yes", "No"}, false},
		{"every cell, req/s", reporttest.Options{},
			[]string{"In req/s, against each group's baseline: worse: toon in crud c=50 (0.87×), grpc in echo c=1 (0.66×); no significant difference: protobuf in crud c=50."}, nil, false},
		{"every cell, two trials", reporttest.Options{Trials: 2},
			[]string{"cannot tell with 2 trials (need 4+ per cell): toon in crud c=50, protobuf in crud c=50, grpc in echo c=1."}, []string{"worse", "better", "×"}, false},
		{"sizes only", reporttest.Options{SizesOnly: true}, nil, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := answerLine(Build(reporttest.Results(tt.opt)))
			if tt.wantNone {
				if got != "" {
					t.Fatalf("answer %q, want none", got)
				}
				return
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("answer %q\nlacks %q", got, w)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(got, w) {
					t.Errorf("answer %q\nsays %q", got, w)
				}
			}
		})
	}
}

// TestFindingsSpeakInAnswerUnit: findings and the main table compare on
// the study's answer metric, not on req/s.
func TestFindingsSpeakInAnswerUnit(t *testing.T) {
	rep := Build(reporttest.Results(reporttest.Options{Answer: results.Answer{Metric: "server_cpu_per_req"}}))
	g := rep.Groups[0]
	if g.Answer != "server_cpu_per_req" {
		t.Fatalf("group answers in %q", g.Answer)
	}
	for _, f := range g.Findings() {
		if !strings.Contains(f.Text, "server CPU per request") || strings.Contains(f.Text, "req/s") {
			t.Errorf("finding %q is not in server CPU per request", f.Text)
		}
	}
	if f := g.Findings()[0]; f.Verdict != Worse {
		t.Errorf("toon's 21%% more CPU per request judged %v, want Worse", f.Verdict)
	}
	h := mainTable(g).Header
	if h[1] != "server CPU/req" || h[2] != "vs baseline" || slices.Index(h, "req/s") < 3 {
		t.Errorf("main table header %q: want the answer metric and its comparison first", h)
	}
}

// TestAnswerMetricFallsBack: a metric the report does not know, or that
// the group's cells lack (no server sampled), answers in req/s.
func TestAnswerMetricFallsBack(t *testing.T) {
	for _, m := range []string{"", "nope", "server_allocs_per_req"} {
		rep := Build(reporttest.Results(reporttest.Options{Answer: results.Answer{Metric: m}}))
		if got := rep.Groups[0].Answer; got != "rps" {
			t.Errorf("metric %q: group answers in %q, want rps", m, got)
		}
	}
}

// TestBrowserAnswersInLatency: in-browser cells' req/s moves in whole
// batches (equal in every trial here), so they are compared on p50
// latency; their req/s is shown but never compared ("+0.0%").
func TestBrowserAnswersInLatency(t *testing.T) {
	rep := Build(reporttest.Results(reporttest.Options{Browser: true, Answer: results.Answer{Metric: "server_cpu_per_req"}}))
	g := rep.Groups[1]
	if !groupInBrowser(g) || g.Answer != "lat_p50" {
		t.Fatalf("browser group: in browser %v, answers in %q", groupInBrowser(g), g.Answer)
	}
	if rep.Groups[0].Answer != "server_cpu_per_req" {
		t.Errorf("the other group answers in %q, want the study's metric", rep.Groups[0].Answer)
	}
	f := g.Findings()
	if len(f) != 1 || !strings.Contains(f[0].Text, "+58% p50 latency") || strings.Contains(f[0].Text, "req/s") || f[0].Verdict != Worse {
		t.Errorf("browser findings %+v: want p50 latency, worse, no req/s", f)
	}
	h := mainTable(g).Header
	if h[1] != "p50" || h[2] != "vs baseline" || strings.Count(strings.Join(h, "|"), "vs baseline") != 1 {
		t.Errorf("browser main table header %q: want p50 and one comparison first", h)
	}
	if all := groupTable(g).Header; slices.Contains(all, "req/s vs base") || !slices.Contains(all, "p50 vs base") {
		t.Errorf("browser all-metrics header %q: want p50 compared, req/s not", all)
	}
	var csvOut bytes.Buffer
	if err := WriteCSV(&csvOut, rep); err != nil {
		t.Fatal(err)
	}
	rows, _ := csv.NewReader(&csvOut).ReadAll()
	col := func(name string) int { return slices.Index(rows[0], name) }
	for _, r := range rows[1:] {
		if r[0] == "cell" && r[1] == g.Name && r[3] == "grpc" {
			if r[col("answer_metric")] != "p50_ms" || r[col("answer_vs_base_verdict")] != "worse" || r[col("req_per_s_vs_base_verdict")] != "" {
				t.Errorf("browser CSV row: answer %q %q, req/s verdict %q", r[col("answer_metric")], r[col("answer_vs_base_verdict")], r[col("req_per_s_vs_base_verdict")])
			}
		}
	}
	if a := answerLine(rep); !strings.Contains(a, "p50 latency (in-browser groups)") {
		t.Errorf("answer %q does not say the browser group is compared in latency", a)
	}
}

// TestAnswerUsesCapacity: where a group measured capacity, the answer is
// in capacity whatever the study names. Capacity's metric (registered by
// report/capacity.go where capacity is measured) is replaced here by a
// stand-in that every synthetic trial has.
func TestAnswerUsesCapacity(t *testing.T) {
	saved := Metrics
	t.Cleanup(func() { Metrics = saved })
	Metrics = slices.DeleteFunc(slices.Clone(Metrics), func(m Metric) bool { return m.Key == capacityKey })
	Metrics = append(Metrics, Metric{Key: capacityKey, Label: "capacity", Unit: UnitRate, HigherIsBetter: true,
		Value: func(t results.Trial) (float64, bool) { return 0.8 * t.Load.RPS(), true }})
	rep := Build(reporttest.Results(reporttest.Options{Question: "Is TOON cheaper to serve than JSON?", Answer: results.Answer{Metric: "server_cpu_per_req", Cell: "toon"}}))
	if g := rep.Groups[0]; g.Answer != capacityKey {
		t.Fatalf("group answers in %q, want capacity", g.Answer)
	}
	if a := answerLine(rep); !strings.Contains(a, "× the capacity of json") || strings.Contains(a, "server CPU") {
		t.Errorf("answer %q is not in capacity", a)
	}
}

// TestAnswerEveryGroupWithTheCell: a cell label in several groups (study
// kv: "wirebench RESP" per operation and persistence) answers once per
// group, each named, in one line.
func TestAnswerEveryGroupWithTheCell(t *testing.T) {
	r := reporttest.Results(reporttest.Options{Question: "How fast is toon?", Answer: results.Answer{Metric: "rps", Cell: "toon"}})
	for i := range r.Cells {
		if r.Cells[i].Label == "grpc" {
			r.Cells[i].Label = "toon"
		}
	}
	got := answerLine(Build(r))
	want := "crud c=50: 0.87× the req/s of json [0.83…0.94] (p=0.005, 6 trials); echo c=1: 0.66× the req/s of http1 ["
	if !strings.HasPrefix(got, want) || !strings.HasSuffix(got, ".") || strings.Count(got, ";") != 1 {
		t.Errorf("answer %q\nwant it to start %q", got, want)
	}
}
