package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

func TestParseTolerance(t *testing.T) {
	for _, tc := range []struct {
		in   string
		name string
		pct  float64
		err  string
	}{
		{"p99:+10%", "p99", 10, ""},
		{"rps:-5%", "rps", -5, ""},
		{"cpu_per_req:+5%", "cpu_per_req", 5, ""},
		{"cpu_per_req:5%", "cpu_per_req", 5, ""}, // no sign: the bad direction
		{"rps:5%", "rps", -5, ""},
		{" lat_p99 : +2.5% ", "p99", 2.5, ""}, // the report's key, spaces
		{"p99:0%", "p99", 0, ""},
		{"capacity:-10%", "capacity", -10, ""},
		{"rps:+5%", "", 0, "rps regresses by a fall; write rps:-5%"},
		{"p99:-10%", "", 0, "p99 regresses by a rise; write p99:+10%"},
		{"p99:10", "", 0, "in percent"},
		{"p99", "", 0, "want METRIC:±N%"},
		{"p98:+10%", "", 0, `unknown metric "p98"`},
		{"p99:+x%", "", 0, "not a percentage"},
		{"p99:+%", "", 0, "not a percentage"},
		{"p99:+-5%", "", 0, "not a percentage"},
		{"p99:NaN%", "", 0, "not a percentage"},
		{"p99:+1001%", "", 0, "at most 1000%"},
		{"rps:-100%", "", 0, "cannot fall by 100%"},
	} {
		tol, err := ParseTolerance(tc.in)
		if tc.err != "" {
			if err == nil || !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want one containing %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || tol.Metric.Name != tc.name || tol.Pct != tc.pct {
			t.Errorf("%q = %v %v, %v; want %s %v", tc.in, tol.Metric.Name, tol.Pct, err, tc.name, tc.pct)
		}
	}
	if _, err := ParseTolerances([]string{"p99:+10%", "lat_p99:+5%"}); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("duplicate metric: %v", err)
	}
	if got := mustTol(t, "rps:-5%").Boundary(); math.Abs(got+math.Log(0.95)) > 1e-15 {
		t.Errorf("rps:-5%% boundary %v, want −log 0.95", got)
	}
}

func mustTol(t *testing.T, s string) Tolerance {
	t.Helper()
	tol, err := ParseTolerance(s)
	if err != nil {
		t.Fatal(err)
	}
	return tol
}

// FuzzParseTolerance: any input gives a tolerance or an ErrOptions error;
// a tolerance prints back to one that parses the same, and its boundary
// is a finite number ≥ 0.
func FuzzParseTolerance(f *testing.F) {
	for _, s := range []string{"p99:+10%", "rps:-5%", "cpu_per_req:5%", "p99:", ":%", "rps:-99.99%", "p50:1e3%", "x:+-1%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tol, err := ParseTolerance(s)
		if err != nil {
			if !errors.Is(err, ErrOptions) {
				t.Fatalf("%q: error %v is not ErrOptions", s, err)
			}
			return
		}
		b := tol.Boundary()
		if math.IsNaN(b) || math.IsInf(b, 0) || b < 0 {
			t.Fatalf("%q: boundary %v", s, b)
		}
		again, err := ParseTolerance(tol.String())
		if err != nil || again.Pct != tol.Pct || again.Metric.Name != tol.Metric.Name {
			t.Fatalf("%q → %q → %v, %v", s, tol.String(), again, err)
		}
	})
}

// trial makes one synthetic trial: rps requests per second over one
// second, every latency lat, and cpu of server CPU per request.
func trial(cell string, rps float64, lat, cpu time.Duration) results.Trial {
	h := measure.NewHistogram()
	for range 100 {
		h.Record(lat)
	}
	start := time.Unix(1e9, 0)
	req := int64(rps)
	return results.Trial{Cell: cell, ServerPID: 1, ServerCPUs: []int{1}, ClientCPUs: []int{0},
		Load:   &results.Load{Requests: req, Start: start, End: start.Add(time.Second), Latency: h},
		Server: results.ServerStats{CPU: cpu * time.Duration(req)}}
}

// synthetic is a two-cell study (plus an A/A cell when aa): n trials a
// side, the change's CPU per request multiplied by cpuFactor, lognormal
// noise of sigma on every figure.
func synthetic(n int, sigma, cpuFactor float64, aa bool) *results.Study {
	rng := rand.New(rand.NewPCG(5, uint64(n)))
	noisy := func(v float64) float64 { return v * math.Exp(sigma*rng.NormFloat64()) }
	cmd := []string{"./srv", "-addr", "127.0.0.1:{port}"}
	s := &results.Study{Schema: results.StudySchema, Study: "gate", Options: results.StudyOptions{Order: "abba"},
		Env: measure.Env{CPUModel: "Test CPU", NumCPU: 2, Kernel: "Linux 6.1"},
		Cells: []results.Cell{
			{ID: "gate/base", Group: "gate", Label: "base", Baseline: true, Rev: "main", Commit: "aaaa", Command: cmd},
			{ID: "gate/change", Group: "gate", Label: "change", Rev: "HEAD", Commit: "bbbb", Command: cmd},
		}}
	if aa {
		s.Cells = append(s.Cells, results.Cell{ID: "gate/base-again", Group: "gate", Label: "base-again", Rev: "main", Commit: "aaaa", Command: cmd})
	}
	for i := range n {
		for _, c := range s.Cells {
			f := 1.0
			if c.Label == "change" {
				f = cpuFactor
			}
			tr := trial(c.ID, noisy(10000), time.Duration(noisy(2e6)), time.Duration(noisy(50e3*f)))
			tr.Index = i
			s.Trials = append(s.Trials, tr)
		}
	}
	return s
}

func evaluate(t *testing.T, s *results.Study, o Options) *Result {
	t.Helper()
	r, err := Evaluate(s, o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestEvaluate(t *testing.T) {
	ts := []Tolerance{mustTol(t, "p99:+10%"), mustTol(t, "rps:-5%"), mustTol(t, "cpu_per_req:+5%")}
	t.Run("planted 3× CPU cost", func(t *testing.T) {
		r := evaluate(t, synthetic(8, 0.01, 3, false), Options{Tolerances: ts})
		if r.Verdict != Regression || r.ExitCode != 1 {
			t.Fatalf("%s (exit %d): %s", r.Verdict, r.ExitCode, r.Summary)
		}
		c := r.Checks[2]
		if c.Verdict != Regression || math.Abs(float64(c.Delta)-2) > 0.1 || !(float64(c.Lo) > 0.05) {
			t.Errorf("cpu_per_req: %+v", c)
		}
		if r.Checks[0].Verdict != Pass || r.Checks[1].Verdict != Pass {
			t.Errorf("p99 %s, rps %s: untouched metrics must pass", r.Checks[0].Verdict, r.Checks[1].Verdict)
		}
		if !strings.HasPrefix(r.Summary, "REGRESSION: cpu_per_req +") {
			t.Errorf("summary %q", r.Summary)
		}
	})
	t.Run("identical", func(t *testing.T) {
		r := evaluate(t, synthetic(8, 0.01, 1, true), Options{Tolerances: ts})
		if r.Verdict != Pass || r.ExitCode != 0 || r.Change.Cell != "gate/change" {
			t.Fatalf("%s: %s (change %s)", r.Verdict, r.Summary, r.Change.Cell)
		}
		if r.Noise.AA == nil || r.Noise.AA.Cell != "gate/base-again" || len(r.Noise.AA.Checks) != 3 {
			t.Errorf("A/A pair not found: %+v", r.Noise.AA)
		}
		for _, c := range r.Checks {
			if !(float64(c.MDE) > 0 && float64(c.MDE) < 0.05) && !(c.HigherIsBetter && float64(c.MDE) < 0 && float64(c.MDE) > -0.05) {
				t.Errorf("%s: MDE %v with 1%% noise at 8+8", c.Metric, c.MDE)
			}
		}
		if !r.Noise.Pinned || !strings.Contains(r.Noise.Order, "ABBA") || !strings.Contains(r.Noise.Machine, "Test CPU") || r.Noise.Trials != "8+8" {
			t.Errorf("noise %+v", r.Noise)
		}
	})
	t.Run("too few trials", func(t *testing.T) {
		r := evaluate(t, synthetic(3, 0.01, 3, false), Options{Tolerances: ts})
		if r.Verdict != Undecidable || r.ExitCode != 3 || !strings.Contains(r.Checks[2].Why, "run at least 4 per side") {
			t.Fatalf("%s: %s / %s", r.Verdict, r.Summary, r.Checks[2].Why)
		}
	})
	t.Run("noise beyond the tolerance", func(t *testing.T) {
		r := evaluate(t, synthetic(6, 0.2, 1, true), Options{Tolerances: ts})
		if r.Verdict == Regression {
			t.Fatalf("an unchanged build failed: %s", r.Summary)
		}
		w := strings.Join(r.Noise.Warnings, "\n")
		if !strings.Contains(w, "between trials of the same build") || !strings.Contains(w, "A/A pair") || !strings.Contains(w, "p99: this run's MDE") {
			t.Errorf("no noise warning: %q", w)
		}
	})
	t.Run("the change never served", func(t *testing.T) {
		s := synthetic(6, 0.01, 1, false)
		for i := range s.Trials {
			if s.Trials[i].Cell == "gate/change" {
				s.Trials[i].Error, s.Trials[i].Load = "server exited with status 2", nil
			}
		}
		r := evaluate(t, s, Options{Tolerances: ts})
		if r.Verdict != Regression || !strings.Contains(r.Summary, "failed every trial") || !strings.Contains(r.Summary, "status 2") {
			t.Errorf("%s: %s", r.Verdict, r.Summary)
		}
	})
	t.Run("capacity not measured", func(t *testing.T) {
		r := evaluate(t, synthetic(8, 0.01, 1, false), Options{Tolerances: []Tolerance{mustTol(t, "capacity:-5%")}})
		if r.Verdict != Undecidable || r.Checks[0].Verdict != Skipped || !strings.Contains(r.Checks[0].Why, "capacity") {
			t.Errorf("%s: %+v", r.Verdict, r.Checks[0])
		}
		r = evaluate(t, synthetic(8, 0.01, 1, false), Options{Tolerances: append(ts, mustTol(t, "capacity:-5%"))})
		if r.Verdict != Pass {
			t.Errorf("a skipped metric beside judged ones: %s", r.Summary)
		}
	})
	t.Run("options", func(t *testing.T) {
		s := synthetic(6, 0.01, 1, true)
		for _, o := range []Options{{Base: "nope"}, {Change: "gate/base"}, {Alpha: 0.5}, {AA: "base"}} {
			if _, err := Evaluate(s, o); !errors.Is(err, ErrOptions) {
				t.Errorf("%+v: %v", o, err)
			}
		}
		s.Cells = append(s.Cells, results.Cell{ID: "gate/other", Label: "other"})
		if _, err := Evaluate(s, Options{}); err == nil || !strings.Contains(err.Error(), "--change") {
			t.Errorf("three candidate cells: %v", err)
		}
		if r, err := Evaluate(s, Options{Change: "change", Tolerances: ts}); err != nil || r.Verdict != Pass {
			t.Errorf("--change by label: %v", err)
		}
		if _, err := Evaluate(&results.Study{SingleRun: true, Cells: []results.Cell{{ID: "x"}}}, Options{}); !errors.Is(err, ErrOptions) {
			t.Errorf("a single run: %v", err)
		}
	})
}

func TestWriteFormats(t *testing.T) {
	ts := []Tolerance{mustTol(t, "p99:+10%"), mustTol(t, "cpu_per_req:+5%"), mustTol(t, "capacity:-5%")}
	r := evaluate(t, synthetic(8, 0.01, 3, true), Options{Tolerances: ts})
	var text, gh, js bytes.Buffer
	for f, b := range map[string]*bytes.Buffer{"text": &text, "github": &gh, "json": &js} {
		if err := Write(b, r, f, "https://ci.example/report.html"); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"REGRESSION: cpu_per_req", "metric", "cpu_per_req", "regression", "skipped", "CPU pinning: server on CPU 1, client on CPU 0", "ABBA", "Test CPU", "A/A pair (gate/base-again", "full report: https://ci.example/report.html"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	if !strings.HasPrefix(gh.String(), "### ❌ Regression — wirebench gate (exit 1)\n") {
		t.Errorf("github does not open with the verdict:\n%s", gh.String())
	}
	for _, want := range []string{"| metric | base | change | Δ (90% CI) | tolerance | MDE | verdict |", "❌ regression", "<details>", "[Full report](https://ci.example/report.html)"} {
		if !strings.Contains(gh.String(), want) {
			t.Errorf("github lacks %q:\n%s", want, gh.String())
		}
	}
	var back map[string]any
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatalf("json: %v\n%s", err, js.String())
	}
	if back["verdict"] != "regression" || back["exit_code"] != 1.0 {
		t.Errorf("json verdict %v exit %v", back["verdict"], back["exit_code"])
	}
	if c := back["checks"].([]any)[2].(map[string]any); c["mde"] != nil || c["verdict"] != "skipped" {
		t.Errorf("a skipped metric's MDE must be null in JSON: %v", c)
	}
	var typed Result
	if err := json.Unmarshal(js.Bytes(), &typed); err != nil || !math.IsNaN(float64(typed.Checks[2].MDE)) || typed.Checks[1].MDE != r.Checks[1].MDE {
		t.Errorf("json round trip: %v, MDEs %v %v", err, typed.Checks[2].MDE, typed.Checks[1].MDE)
	}
	if err := Write(&text, r, "yaml"); !errors.Is(err, ErrOptions) {
		t.Errorf("unknown format: %v", err)
	}
}
