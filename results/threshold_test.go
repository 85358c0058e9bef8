package results

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestThresholds(t *testing.T) {
	t.Parallel()
	r := emptyResult(Segment{})
	for i := 1; i <= 100; i++ {
		r.Latency.Record(time.Duration(i) * time.Millisecond)
	}
	r.Requests, r.Failed = 1000, 5
	r.Start, r.End = time.Unix(0, 0), time.Unix(10, 0)
	tests := []struct {
		expr string
		pass bool
	}{
		{"p99<100ms", true}, {"p99<50ms", false}, {"p50<=51ms", true}, {"p99.9 < 1s", true},
		{"avg<60ms", true}, {"max<100ms", false}, {"min>=1ms", true},
		{"errors<1%", true}, {"errors<0.1%", false}, {"errors<0.01", true},
		{"rps>99", true}, {"rps>100", false},
	}
	for _, tc := range tests {
		th, err := ParseThreshold(tc.expr)
		if err != nil {
			t.Errorf("%s: %v", tc.expr, err)
			continue
		}
		if got, ok := th.Check(r); ok != tc.pass {
			t.Errorf("%s: measured %s, pass=%v, want %v", tc.expr, got, ok, tc.pass)
		}
	}
	for _, bad := range []string{"", "p99", "p99<50", "errors<1ms", "rps>1k", "p0<1ms", "p101<1ms", "foo<1"} {
		if _, err := ParseThreshold(bad); err == nil {
			t.Errorf("ParseThreshold(%q) succeeded", bad)
		}
	}
}

// TestJudge: the verdicts go into the result, the error names each
// failed threshold with what was measured, and a segment of a distributed
// test is left for its merged result.
func TestJudge(t *testing.T) {
	t.Parallel()
	var ths []Threshold
	for _, e := range []string{"errors<1%", "rps>1000", "p99<1ms"} {
		th, err := ParseThreshold(e)
		if err != nil {
			t.Fatal(err)
		}
		ths = append(ths, th)
	}
	r := emptyResult(Segment{})
	r.Latency.Record(5 * time.Millisecond)
	r.Requests = 10
	r.Start, r.End = time.Unix(0, 0), time.Unix(1, 0)
	judged, err := Judge(r, ths)
	if !judged || !errors.Is(err, ErrThresholds) || len(r.Thresholds) != 3 || !r.Thresholds[0].Pass || r.Thresholds[1].Pass {
		t.Fatalf("Judge = %v, %v; verdicts %+v", judged, err, r.Thresholds)
	}
	if want := "thresholds failed: rps>1000 (measured 10.0); p99<1ms (measured 5.00ms)"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if judged, err := Judge(r, ths[:1]); !judged || err != nil {
		t.Errorf("passing thresholds: Judge = %v, %v", judged, err)
	}
	seg := emptyResult(Segment{I: 1, N: 4})
	if judged, err := Judge(seg, ths); judged || err != nil || seg.Thresholds != nil {
		t.Errorf("a segment: Judge = %v, %v; verdicts %+v", judged, err, seg.Thresholds)
	}
}

func TestSummary(t *testing.T) {
	t.Parallel()
	r := emptyResult(Segment{})
	r.Options.Rate, r.Options.Concurrency = 100, 4
	r.Latency.Record(30 * time.Millisecond)
	r.Lag.Record(10 * time.Millisecond)
	r.Requests, r.Failed = 10, 1
	r.Failures["status 500"] = 1
	r.Status["200"], r.Status["500"] = 9, 1
	r.Start, r.End = time.Unix(0, 0), time.Unix(1, 0)
	r.Warnings = Diagnose(r)
	var buf bytes.Buffer
	if err := WriteSummary(&buf, r); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"open loop", "10.0/s", "failed 1", "p99.9", "service time", "schedule lag",
		"200×9", "failures by cause", "1  status 5xx (500×1)", "client CPU", "WARNING: schedule lag p99", "achieved 10 of 100 req/s"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

// FuzzParseThreshold: never panics; an accepted threshold evaluates on
// an empty and a busy result without panicking.
func FuzzParseThreshold(f *testing.F) {
	for _, s := range []string{"p99<50ms", "p99.9<=200ms", "avg<10ms", "errors<1%", "rps>1000", "p0<1s", "p101<1s", "max<"} {
		f.Add(s)
	}
	r := emptyResult(Segment{})
	f.Fuzz(func(t *testing.T, s string) {
		th, err := ParseThreshold(s)
		if err != nil {
			if !errors.Is(err, ErrThreshold) {
				t.Fatalf("%q: error %v not ErrThreshold", s, err)
			}
			return
		}
		if math.IsNaN(th.value) || math.IsInf(th.value, 0) {
			t.Fatalf("%q: value %v", s, th.value)
		}
		th.Check(r)
	})
}

func TestCheckSuccess(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		req, failed int64
		want        string
	}{
		{10, 9, ""},
		{0, 0, "no request completed"},
		{5, 5, "no request succeeded: 5 of 5 failed: "},
	} {
		r := &Load{Requests: tc.req, Failed: tc.failed, Failures: map[string]int64{}}
		if tc.failed > 0 {
			r.Failures["dial tcp: connection refused"] = tc.failed
		}
		err := CheckSuccess(r)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%d of %d failed: %v", tc.failed, tc.req, err)
		case tc.want != "" && (!errors.Is(err, ErrNoSuccess) || !strings.HasPrefix(err.Error(), tc.want)):
			t.Errorf("%d of %d failed: %v, want ErrNoSuccess %q…", tc.failed, tc.req, err, tc.want)
		}
	}
	th, _ := ParseThreshold("errors<1%")
	if got := CheckThresholds(&Load{Requests: 100, Failed: 5}, []Threshold{th}); len(got) != 1 || got[0].Pass || got[0].Expr != "errors<1%" {
		t.Errorf("CheckThresholds: %+v", got)
	}
}
