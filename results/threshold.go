package results

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/lazy"
	"github.com/wirebench/wirebench/measure"
)

// Threshold is a pass/fail criterion on a result, k6-style:
// "p99<50ms", "p99.9<=200ms", "avg<10ms", "max<1s", "errors<1%",
// "rps>1000". Latency metrics are on the (corrected) latency histogram.
type Threshold struct {
	Expr   string
	metric string
	q      float64 // for pNN
	op     string
	value  float64 // seconds for latency, fraction for errors, req/s for rps
}

var thresholdRE = lazy.Regexp(`^\s*(p[0-9.]+|avg|min|max|errors|rps)\s*(<=|>=|<|>)\s*([0-9.]+)\s*([a-zµ%]*)\s*$`)

// ParseThreshold parses one threshold expression.
func ParseThreshold(s string) (Threshold, error) {
	m := thresholdRE().FindStringSubmatch(s)
	if m == nil {
		return Threshold{}, fmt.Errorf("%w: %q (want e.g. p99<50ms, errors<1%%, rps>1000)", ErrThreshold, s)
	}
	t := Threshold{Expr: strings.TrimSpace(s), metric: m[1], op: m[2]}
	num, err := strconv.ParseFloat(m[3], 64)
	if err != nil {
		return t, fmt.Errorf("%w: %q: bad number", ErrThreshold, s)
	}
	switch unit := m[4]; {
	case t.metric == "errors":
		if unit != "%" && unit != "" {
			return t, fmt.Errorf("%w: %q: errors take %%", ErrThreshold, s)
		}
		t.value = num
		if unit == "%" {
			t.value = num / 100
		}
	case t.metric == "rps":
		if unit != "" {
			return t, fmt.Errorf("%w: %q: rps takes no unit", ErrThreshold, s)
		}
		t.value = num
	default:
		d, err := time.ParseDuration(m[3] + unit)
		if err != nil || unit == "" {
			return t, fmt.Errorf("%w: %q: want a duration such as 50ms", ErrThreshold, s)
		}
		t.value = d.Seconds()
		if strings.HasPrefix(t.metric, "p") {
			if t.q, err = strconv.ParseFloat(t.metric[1:], 64); err != nil || t.q <= 0 || t.q > 100 {
				return t, fmt.Errorf("%w: %q: bad percentile", ErrThreshold, s)
			}
		}
	}
	return t, nil
}

// Check evaluates t on r, returning the measured value and whether it passed.
func (t Threshold) Check(r *Load) (got string, ok bool) {
	var v float64
	switch t.metric {
	case "errors":
		v = r.ErrorRate()
		got = fmt.Sprintf("%.3f%%", 100*v)
	case "rps":
		v = r.RPS()
		got = fmt.Sprintf("%.1f", v)
	default:
		return t.CheckLatency(r.Latency)
	}
	return got, t.holds(v)
}

// Bound is a latency threshold's bound ("p99<20ms": 20ms); false for
// errors and rps.
func (t Threshold) Bound() (time.Duration, bool) {
	if t.metric == "errors" || t.metric == "rps" || t.metric == "" {
		return 0, false
	}
	return time.Duration(t.value * float64(time.Second)), true
}

// Metric is what t measures: pNN, avg, min, max, errors or rps.
func (t Threshold) Metric() string { return t.metric }

// Op is t's comparison: <, <=, > or >=.
func (t Threshold) Op() string { return t.op }

// Value is t's bound in its metric's unit: seconds for latency, a
// fraction for errors (1% is 0.01), requests per second for rps.
func (t Threshold) Value() float64 { return t.value }

// CheckLatency evaluates a latency threshold on h — the service-time
// histogram, say, rather than the run's latency. An errors or rps
// threshold is not about latency: it holds here.
func (t Threshold) CheckLatency(h *measure.Histogram) (got string, ok bool) {
	if _, lat := t.Bound(); !lat || h == nil {
		return "", true
	}
	var d time.Duration
	switch t.metric {
	case "avg":
		d = h.Mean()
	case "min":
		d = h.Min()
	case "max":
		d = h.Max()
	default:
		d = h.Quantile(t.q / 100)
	}
	return FormatDuration(d), t.holds(d.Seconds())
}

func (t Threshold) holds(v float64) bool {
	switch t.op {
	case "<":
		return v < t.value
	case "<=":
		return v <= t.value
	case ">":
		return v > t.value
	case ">=":
		return v >= t.value
	}
	return false
}

// ErrThresholds is the error of a result whose thresholds failed.
var ErrThresholds = errors.New("thresholds failed")

// Judge records the verdicts of ths in r.Thresholds and returns
// ErrThresholds, naming each failed threshold and what was measured, when
// any failed. A segment of a distributed test (Segment.N > 1) is not
// judged, and judged is false: a segment's share of the load says nothing
// of the test's thresholds (rps>1000 fails on every quarter of a 2000/s
// run); the merged result is judged.
func Judge(r *Load, ths []Threshold) (judged bool, err error) {
	if r.Options.Segment.N > 1 {
		return false, nil
	}
	r.Thresholds = CheckThresholds(r, ths)
	var failed []string
	for _, th := range r.Thresholds {
		if !th.Pass {
			failed = append(failed, fmt.Sprintf("%s (measured %s)", th.Expr, th.Measured))
		}
	}
	if len(failed) > 0 {
		return true, fmt.Errorf("%w: %s", ErrThresholds, strings.Join(failed, "; "))
	}
	return true, nil
}

// CheckThresholds gives each threshold's verdict on r, in order.
func CheckThresholds(r *Load, ths []Threshold) []ThresholdResult {
	var out []ThresholdResult
	for _, th := range ths {
		got, ok := th.Check(r)
		out = append(out, ThresholdResult{Expr: th.Expr, Measured: got, Pass: ok})
	}
	return out
}

// ErrNoSuccess marks a run in which no request succeeded: the target was
// unreachable, or answered only with failures.
var ErrNoSuccess = errors.New("no request succeeded")

// CheckSuccess is ErrNoSuccess, with the failures' causes, for a run
// in which no request succeeded; nil otherwise. A run that a script
// started should fail when its summary shows nothing but failures.
func CheckSuccess(r *Load) error {
	if r.Requests > r.Failed {
		return nil
	}
	if r.Requests == 0 {
		return noSuccess("no request completed")
	}
	return noSuccess(fmt.Sprintf("no request succeeded: %d of %d failed: %s", r.Failed, r.Requests,
		CausesLine(FailureCauses(r.Failures), r.Requests)))
}

// noSuccess is ErrNoSuccess in its own words.
type noSuccess string

func (e noSuccess) Error() string { return string(e) }
func (e noSuccess) Unwrap() error { return ErrNoSuccess }
