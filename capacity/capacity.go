package capacity

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/results"
)

// ErrOptions reports options a search cannot run with.
var ErrOptions = errors.New("capacity: invalid options")

// Defaults of Options' zero fields.
const (
	DefaultMinRate      = 1
	DefaultMaxRate      = 100_000
	DefaultStartRate    = 100
	DefaultGrowth       = 4
	DefaultPrecision    = 0.05
	DefaultStepDuration = 5 * time.Second
	DefaultWarmup       = time.Second
	DefaultMaxTime      = 10 * time.Minute
	DefaultMaxSteps     = 16
	DefaultConcurrency  = 1000
	DefaultArrivals     = results.Poisson
	DefaultMaxRetries   = 3
	// DefaultErrors joins an SLO that bounds no error rate.
	DefaultErrors = "errors<1%"
	// sizingLatency sizes the workers of an SLO with no latency bound
	// (errors only).
	sizingLatency = 100 * time.Millisecond
	minWorkers    = 8
)

// Options configure a search. The zero value of every field but SLO is
// its default.
type Options struct {
	// SLO are the criteria a step must meet (latency thresholds such as
	// p99<20ms, judged from the intended send time, and errors<0.1%).
	SLO []results.Threshold
	// MinRate and MaxRate bound the search (req/s); StartRate is its
	// first step, Growth the factor between steps until one fails.
	MinRate, MaxRate, StartRate, Growth float64
	// Precision is when the search stops: the first failing rate is
	// within this fraction of the last passing one (0.05: 5%).
	Precision float64
	// StepDuration is each step's measured window, after Warmup at the
	// same rate (default DefaultWarmup; negative: none). ConfirmDuration is
	// the confirmation run's (default twice StepDuration; negative: no
	// confirmation).
	StepDuration, Warmup, ConfirmDuration time.Duration
	// MaxTime and MaxSteps bound the whole search (confirmation included).
	MaxTime  time.Duration
	MaxSteps int
	// Concurrency caps the requests in flight (default 1000). Each step
	// uses what its rate needs at the SLO's latency, up to this cap.
	Concurrency int
	// Arrivals is the steps' arrival process, Poisson by default (an SLO
	// promised to users must hold under bursty arrivals, not only under
	// a metronome), and Seed its seed (0: load.DefaultSeed). Run passes
	// them to the engine; a caller of Search with a StepFunc of its own
	// records here what its steps use.
	Arrivals results.Arrivals
	Seed     uint64
	// ServerCores is the server's CPU allowance (its quota, or its CPUs;
	// 0 unknown): a failing step in which the server used less of it while
	// other processes were busy on its CPUs was disturbed.
	ServerCores float64
	// MaxRetries bounds the disturbed steps measured again in one search
	// (default 3; negative: none).
	MaxRetries int
	// Progress, if set, is told each step as it is judged, with its
	// number from 1 (0 for the confirmation run).
	Progress func(n int, s results.CapacityStep)
	// Now is the clock of the time budget (default time.Now).
	Now func() time.Time
}

// Measurement is what a step function measured at one rate.
type Measurement struct {
	Load *results.Load
	// ServerCPU is the server's CPU time over Load's window (0: not sampled).
	ServerCPU time.Duration
	// OtherCPU is the CPU time other processes used on the client's and
	// the server's CPUs over the window; Steal the fraction of those CPUs'
	// time stolen by the hypervisor (both 0: not read).
	OtherCPU time.Duration
	Steal    float64
}

// StepFunc measures the open-loop rate with at most concurrency requests
// in flight for d, after a warm-up of its own choosing. An error ends
// the search (the run could not start); failed requests are data.
type StepFunc func(ctx context.Context, rate float64, concurrency int, d time.Duration) (Measurement, error)

func (o Options) withDefaults() (Options, error) {
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.MinRate, DefaultMinRate)
	def(&o.MaxRate, DefaultMaxRate)
	def(&o.StartRate, DefaultStartRate)
	def(&o.Growth, DefaultGrowth)
	def(&o.Precision, DefaultPrecision)
	if o.StepDuration == 0 {
		o.StepDuration = DefaultStepDuration
	}
	if o.Warmup == 0 {
		o.Warmup = DefaultWarmup
	}
	if o.ConfirmDuration == 0 {
		o.ConfirmDuration = 2 * o.StepDuration
	}
	if o.MaxTime == 0 {
		o.MaxTime = DefaultMaxTime
	}
	if o.MaxSteps == 0 {
		o.MaxSteps = DefaultMaxSteps
	}
	if o.Concurrency == 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.Arrivals == "" {
		o.Arrivals = DefaultArrivals
	}
	if o.Arrivals == results.Poisson && o.Seed == 0 {
		o.Seed = load.DefaultSeed
	}
	if o.Arrivals == results.Uniform {
		o.Seed = 0
	}
	if _, err := results.ParseArrivals(string(o.Arrivals)); err != nil {
		return o, fmt.Errorf("%w: %v", ErrOptions, err)
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = DefaultMaxRetries
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	for _, v := range []float64{o.MinRate, o.MaxRate, o.StartRate, o.Growth, o.Precision} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return o, fmt.Errorf("%w: rates, growth and precision must be finite and positive", ErrOptions)
		}
	}
	switch {
	case len(o.SLO) == 0:
		return o, fmt.Errorf("%w: no SLO (want e.g. p99<20ms)", ErrOptions)
	case o.MinRate > o.MaxRate:
		return o, fmt.Errorf("%w: min rate %g above max rate %g", ErrOptions, o.MinRate, o.MaxRate)
	case o.Growth <= 1:
		return o, fmt.Errorf("%w: growth %g: want > 1", ErrOptions, o.Growth)
	case o.Precision > 1:
		return o, fmt.Errorf("%w: precision %g: want a fraction such as 0.05", ErrOptions, o.Precision)
	case o.StepDuration < 0 || o.MaxTime < 0 || o.MaxSteps < 0 || o.Concurrency < 0:
		return o, fmt.Errorf("%w: negative duration or count", ErrOptions)
	}
	hasErrors := false
	for _, th := range o.SLO {
		if err := CheckSLO(th); err != nil {
			return o, err
		}
		hasErrors = hasErrors || th.Metric() == "errors"
	}
	if !hasErrors {
		// Failed requests are often fast (a refused connection, a 503):
		// without an error bound, a server answering nothing but errors
		// would pass a latency SLO at any rate.
		th, _ := results.ParseThreshold(DefaultErrors)
		o.SLO = append(slices.Clip(o.SLO), th)
	}
	o.StartRate = math.Min(math.Max(o.StartRate, o.MinRate), o.MaxRate)
	return o, nil
}

// Latency the engine can tell apart: its histograms hold 1 µs to 60 s
// and clamp what lies outside.
const (
	minBound = time.Microsecond
	maxBound = time.Minute
)

// CheckSLO refuses a criterion no rate can meet, or that every rate
// meets whatever the server does: either would make the search's answer
// say nothing of the server.
func CheckSLO(th results.Threshold) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrOptions, th.Expr, fmt.Sprintf(format, a...))
	}
	up := th.Op() == "<" || th.Op() == "<="
	switch th.Metric() {
	case "rps":
		return bad("the rate is what the search finds; the SLO takes latency and errors")
	case "errors":
		switch v := th.Value(); {
		case !up:
			return bad("an SLO bounds errors from above (errors<1%%)")
		case v <= 0:
			return bad("no rate can have fewer than no errors; want a share in (0, 100%%), e.g. errors<0.1%%")
		case v >= 1:
			return bad("every rate meets it; want a share in (0, 100%%), e.g. errors<1%%")
		}
		return nil
	}
	b, _ := th.Bound()
	switch {
	case !up:
		return bad("an SLO bounds latency from above (%s<%v)", th.Metric(), max(b, time.Millisecond))
	case b <= minBound:
		return bad("no rate can meet it: latency is measured from %v up", minBound)
	case b > maxBound:
		return bad("every rate meets it: latency is measured up to %v", maxBound)
	}
	return nil
}

// maxConfirms bounds the confirmation runs that may withdraw an answer.
const maxConfirms = 3

// Check reports whether o can run, without running it: the study file's
// parser refuses a bad search before any trial.
func Check(o Options) error {
	_, err := o.withDefaults()
	return err
}

// workers is the concurrency a step at rate needs so that waiting for a
// free worker can only happen when the server is slower than the SLO:
// by Little's law, requests in flight = rate × latency; twice the SLO's
// loosest latency bound leaves room for its spread.
func (o Options) workers(rate float64) (need, use int) {
	var bound time.Duration
	for _, th := range o.SLO {
		if b, ok := th.Bound(); ok && b > bound {
			bound = b
		}
	}
	if bound == 0 {
		bound = sizingLatency
	}
	need = max(minWorkers, int(math.Ceil(2*rate*bound.Seconds())))
	return need, min(need, o.Concurrency)
}

// Search finds the highest rate that meets the SLO, measuring each rate
// with step. The result's scenario, config and environment are the
// caller's to fill. It returns an error only for bad options or a step
// that could not run; a cancelled ctx ends the search with what it has
// (Limit "time").
func Search(ctx context.Context, opts Options, step StepFunc) (*results.Capacity, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	res := &results.Capacity{Schema: results.CapacitySchema, Start: o.Now(), Search: results.CapacitySearch{
		MinRate: o.MinRate, MaxRate: o.MaxRate, StartRate: o.StartRate, Growth: o.Growth, Precision: o.Precision,
		StepDuration: o.StepDuration, Warmup: max(o.Warmup, 0), MaxTime: o.MaxTime, MaxSteps: o.MaxSteps, Concurrency: o.Concurrency,
		Arrivals: o.Arrivals, Seed: o.Seed,
	}}
	for _, th := range o.SLO {
		res.SLO = append(res.SLO, th.Expr)
	}
	s := search{min: o.MinRate, max: o.MaxRate, start: o.StartRate, growth: o.Growth, precision: o.Precision}
	deadline := res.Start.Add(o.MaxTime)
	stepCost := max(o.Warmup, 0) + o.StepDuration
	measureAt := func(n int, rate float64, d time.Duration) (results.CapacityStep, error) {
		need, use := o.workers(rate)
		m, err := step(ctx, rate, use, d)
		if err != nil {
			return results.CapacityStep{}, fmt.Errorf("capacity: step at %.4g/s: %w", rate, err)
		}
		st := results.NewCapacityStep(rate, m.Load)
		st.SetServerCPU(m.ServerCPU)
		judge(&st, o.SLO, need)
		disturbance(&st, m, o)
		if why := nonMonotonic(&st, res.Steps, o); why != "" && n > 0 {
			// The confirmation is exempt: its failure withdraws the
			// answer whatever the curve says.
			st.Disturbed = append(st.Disturbed, why)
		}
		if o.Progress != nil {
			o.Progress(n, st)
		}
		return st, nil
	}
	// Search, then confirm the answer; an answer the server fails when
	// confirmed is withdrawn and the search resumes below it.
	retries := 0
	for confirms := 0; ; confirms++ {
		limit, stopped := "", false
		for {
			rate, done, why := s.next()
			if done {
				limit = why
				break
			}
			if ctx.Err() != nil {
				limit, stopped = results.LimitTime, true
				res.Warnings = append(res.Warnings, fmt.Sprintf("the search was interrupted after %d steps: the capacity lies in the interval it reached", len(res.Steps)))
				break
			}
			if len(res.Steps) >= o.MaxSteps || o.Now().Add(stepCost).After(deadline) {
				limit, stopped = results.LimitTime, true
				res.Warnings = append(res.Warnings, fmt.Sprintf("the search stopped after %d steps (--max-time %s, --max-steps %d): the capacity lies in the interval it reached", len(res.Steps), o.MaxTime, o.MaxSteps))
				break
			}
			st, err := measureAt(len(res.Steps)+1, rate, o.StepDuration)
			if err != nil {
				return nil, err
			}
			if ctx.Err() != nil { // cut short: not a measurement of the rate
				continue
			}
			// A disturbed step is measured again while the search has a
			// step to spare; its last chance is recorded as it is (marked
			// disturbed), better than no measurement at all.
			spare := len(res.Steps)+1 < o.MaxSteps && !o.Now().Add(stepCost).After(deadline)
			if len(st.Disturbed) > 0 && retries < o.MaxRetries && spare {
				// Measured again at the same rate: next proposes it, as
				// nothing was recorded.
				st.Retried = true
				retries++
				res.Steps = append(res.Steps, st)
				continue
			}
			res.Steps = append(res.Steps, st)
			s.record(rate, st.Verdict)
			if neverAnswered(res.Steps) && results.LoadIndependent(st.Failures) {
				// Refused, no handshake, 403: no other rate would be
				// answered either, and each step would hammer it again.
				limit = results.LimitFailed
				break
			}
		}
		if limit != results.LimitFailed && s.lo == 0 && neverAnswered(res.Steps) {
			limit = results.LimitFailed
		}
		res.Rate, res.Low, res.High, res.ClientLimit, res.Limit = s.lo, s.lo, s.hi, s.client, limit
		if stopped || res.Rate == 0 || o.ConfirmDuration <= 0 || limit == results.LimitFailed {
			break
		}
		if confirms == maxConfirms {
			res.Unconfirmed = true
			res.Warnings = append(res.Warnings, fmt.Sprintf("the answer %.4g/s is not confirmed (%d confirmations failed): the server's latency near its capacity varies more than the search's precision; longer steps (--step-duration) narrow it", res.Rate, confirms))
			break
		}
		if o.Now().Add(max(o.Warmup, 0) + o.ConfirmDuration).After(deadline) {
			res.Warnings = append(res.Warnings, "no confirmation run: the time budget was spent")
			break
		}
		st, err := measureAt(0, res.Rate, o.ConfirmDuration)
		if err != nil {
			return nil, err
		}
		if ctx.Err() != nil {
			break
		}
		if st.Verdict != results.StepFail {
			res.Confirm = &st
			if !st.Passed() {
				res.Warnings = append(res.Warnings, fmt.Sprintf("the confirmation run at %.4g/s was not judged: %s", res.Rate, st.Why))
			}
			break
		}
		res.Steps = append(res.Steps, st) // the curve keeps the failed run
		res.Disturbed = append(res.Disturbed, fmt.Sprintf("the confirmation at %.4g/s failed after the step at that rate passed", res.Rate))
		res.Warnings = append(res.Warnings, fmt.Sprintf("the confirmation run at %.4g/s failed (%s): the rate is withdrawn and the search resumed below it", res.Rate, st.Why))
		s.withdraw(res.Rate)
	}
	boundDisturbed(res)
	if a := res.Answer(); a != nil {
		res.ServerCPUPerRequest = a.ServerCPUPerRequest
		res.Warnings = append(res.Warnings, sampleWarnings(o.SLO, *a)...)
	}
	res.Warnings = append(res.Warnings, curveWarnings(res, o)...)
	res.Warnings = append(res.Warnings, stepWarnings(o)...)
	res.End = o.Now()
	return res, nil
}

// neverAnswered reports whether steps ran and no request of any
// succeeded.
func neverAnswered(steps []results.CapacityStep) bool {
	for i := range steps {
		if !steps[i].NoSuccess() {
			return false
		}
	}
	return len(steps) > 0
}

// stepWarnings says when steps are too short to tell an overload of one
// precision step from a pass: overloaded by a fraction p, a server's
// queue grows by p × the step's length, and the step fails only once that
// passes the SLO's latency bound.
func stepWarnings(o Options) []string {
	var bound time.Duration
	for _, th := range o.SLO {
		if b, ok := th.Bound(); ok && b > bound {
			bound = b
		}
	}
	need := time.Duration(float64(bound) / o.Precision)
	if bound == 0 || o.StepDuration >= need {
		return nil
	}
	return []string{fmt.Sprintf("steps of %v cannot tell a server overloaded by %.3g%% from one that keeps up: its queue grows by only %v in a step, under the SLO's %v; --step-duration %v or more can",
		o.StepDuration, 100*o.Precision, time.Duration(float64(o.StepDuration)*o.Precision).Round(time.Millisecond), bound, need.Round(time.Millisecond))}
}

// sampleWarnings says when the answer's measurement had too few requests
// for the SLO's highest percentile to be more than its largest values.
func sampleWarnings(slo []results.Threshold, st results.CapacityStep) []string {
	q := 0.0
	for _, th := range slo {
		var p float64
		if _, err := fmt.Sscanf(th.Metric(), "p%g", &p); err == nil && p > q {
			q = p
		}
	}
	if q == 0 || q >= 100 {
		return nil
	}
	want := int64(math.Ceil(10 / (1 - q/100))) // ten requests beyond the percentile
	if st.Requests >= want {
		return nil
	}
	return []string{fmt.Sprintf("the answer's run at %.4g/s had %d requests: its p%g rests on its %d slowest; a longer --step-duration gives it %d",
		st.Offered, st.Requests, q, max(1, int64(float64(st.Requests)*(1-q/100))), want)}
}
