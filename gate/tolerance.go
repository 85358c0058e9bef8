package gate

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ErrOptions marks gate options that cannot be used (a bad tolerance, an
// unknown cell): the command line reports it as a usage error.
var ErrOptions = errors.New("gate: bad options")

// MaxTolerance bounds a cost's tolerance (+1000%: ten times worse); a
// rate's must stay under 100% (it cannot fall further).
const MaxTolerance = 1000.0

// MaxTolerances is how many tolerances one gate takes.
const MaxTolerances = 32

// Tolerance is how much worse one metric may get: Pct is signed in the
// metric's bad direction (+10 for p99 means 10% slower allowed, −5 for
// rps 5% fewer requests per second).
type Tolerance struct {
	Metric Metric
	Pct    float64
}

// String is the tolerance as written: "p99:+10%".
func (t Tolerance) String() string {
	return t.Metric.Name + ":" + strconv.FormatFloat(t.Pct, 'f', -1, 64) + "%"
}

// Signed formats the percentage with its sign, "+10%" or "-5%".
func (t Tolerance) Signed() string {
	return fmt.Sprintf("%+g%%", t.Pct)
}

// Boundary is the tolerance on the log scale of "badness": log(1+t) for a
// cost, −log(1−t) for a rate. A change whose badness shift exceeds it is
// a regression beyond the tolerance.
func (t Tolerance) Boundary() float64 {
	f := math.Abs(t.Pct) / 100
	if t.Metric.HigherIsBetter {
		return -math.Log1p(-f)
	}
	return math.Log1p(f)
}

// ParseTolerance reads METRIC:±N% ("p99:+10%", "rps:-5%",
// "cpu_per_req:5%"). The sign, if given, must be the metric's bad
// direction (a rise for costs, a fall for rates); without one it is
// taken to be.
func ParseTolerance(s string) (Tolerance, error) {
	name, val, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return Tolerance{}, fmt.Errorf("%w: tolerance %q: want METRIC:±N%% (e.g. p99:+10%%, rps:-5%%)", ErrOptions, s)
	}
	name, val = strings.TrimSpace(name), strings.TrimSpace(val)
	m, ok := MetricByName(name)
	if !ok {
		return Tolerance{}, fmt.Errorf("%w: tolerance %q: unknown metric %q (have %s)", ErrOptions, s, name, MetricNames())
	}
	num, pct := strings.CutSuffix(val, "%")
	if !pct {
		return Tolerance{}, fmt.Errorf("%w: tolerance %q: give the change in percent (e.g. %s:%s10%%)", ErrOptions, s, m.Name, badSign(m))
	}
	sign := ""
	if num != "" && (num[0] == '+' || num[0] == '-') {
		sign, num = num[:1], num[1:]
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || num == "" || strings.ContainsAny(num, "+-") {
		return Tolerance{}, fmt.Errorf("%w: tolerance %q: %q is not a percentage", ErrOptions, s, val)
	}
	if sign != "" && sign != badSign(m) {
		dir := "rise"
		if m.HigherIsBetter {
			dir = "fall"
		}
		return Tolerance{}, fmt.Errorf("%w: tolerance %q: %s regresses by a %s; write %s:%s%s%%", ErrOptions, s, m.Name, dir, m.Name, badSign(m), num)
	}
	switch {
	case m.HigherIsBetter && v >= 100:
		return Tolerance{}, fmt.Errorf("%w: tolerance %q: %s cannot fall by %v%% or more", ErrOptions, s, m.Name, v)
	case v > MaxTolerance:
		return Tolerance{}, fmt.Errorf("%w: tolerance %q: at most %v%%", ErrOptions, s, MaxTolerance)
	}
	if m.HigherIsBetter {
		v = -v
	}
	return Tolerance{Metric: m, Pct: v}, nil
}

func badSign(m Metric) string {
	if m.HigherIsBetter {
		return "-"
	}
	return "+"
}

// DefaultTolerances are the gate's when none are given: the tail latency,
// the throughput and the server's CPU per request, loose enough that six
// 10-second trials a side on an ordinary machine can resolve them (a
// tighter tolerance than the run's MDE can only end undecidable).
func DefaultTolerances() []Tolerance {
	var out []Tolerance
	for _, s := range DefaultToleranceText {
		t, err := ParseTolerance(s)
		if err != nil {
			panic(err)
		}
		out = append(out, t)
	}
	return out
}

// DefaultToleranceText are the default tolerances as written.
var DefaultToleranceText = []string{"p99:+20%", "rps:-10%", "cpu_per_req:+10%"}

// ParseTolerances reads several, refusing a metric given twice.
func ParseTolerances(ss []string) ([]Tolerance, error) {
	if len(ss) > MaxTolerances {
		return nil, fmt.Errorf("%w: %d tolerances, more than the limit of %d", ErrOptions, len(ss), MaxTolerances)
	}
	var out []Tolerance
	seen := map[string]bool{}
	for _, s := range ss {
		t, err := ParseTolerance(s)
		if err != nil {
			return nil, err
		}
		if seen[t.Metric.Name] {
			return nil, fmt.Errorf("%w: tolerance for %s given twice", ErrOptions, t.Metric.Name)
		}
		seen[t.Metric.Name] = true
		out = append(out, t)
	}
	return out, nil
}
