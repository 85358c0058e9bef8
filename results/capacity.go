package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/wirebench/wirebench/measure"
)

// CapacitySchema names the capacity result file format (wirebench
// capacity --out).
const CapacitySchema = "wirebench.capacity/v2"

// ErrCapacity reports a capacity result that cannot be read.
var ErrCapacity = errors.New("capacity: bad result")

// Why a capacity search stopped (Capacity.Limit).
const (
	// LimitSLO: a step met the SLO and one a precision step above it did
	// not. Rate is the capacity, within [Low, High].
	LimitSLO = "slo"
	// LimitMaxRate: every step up to the maximum rate met the SLO; the
	// capacity is at least Rate.
	LimitMaxRate = "max-rate"
	// LimitMinRate: even the minimum rate failed the SLO.
	LimitMinRate = "min-rate"
	// LimitClient: the client could not keep up before the server failed
	// the SLO; the server's capacity is at least Rate, and nothing is said
	// of it above.
	LimitClient = "client"
	// LimitTime: the search ran out of its time budget or steps;
	// [Low, High] is as far as it got.
	LimitTime = "time"
	// LimitFailed: no request of any step succeeded (nothing listening,
	// a refused handshake, only errors): the target never answered, and
	// no rate says anything of its capacity. The steps' Failures say why.
	LimitFailed = "failed"
)

// Step verdicts (CapacityStep.Verdict).
const (
	StepPass   = "pass"   // the client kept up and the SLO was met
	StepFail   = "fail"   // the server missed the SLO (latency from the actual send, or errors)
	StepClient = "client" // the client did not keep up: the step says nothing of the server
)

// Capacity is one capacity search: the highest open-loop rate whose
// latency and error rate met the SLO, the steps that found it and the run
// that confirmed it. Plain data, written as the JSON result file.
type Capacity struct {
	Schema   string      `json:"schema"`
	Scenario string      `json:"scenario"`
	Config   Config      `json:"config,omitzero"`
	Env      measure.Env `json:"env"`
	Link     *Link       `json:"link,omitempty"` // --link: as in Load
	Start    time.Time   `json:"start"`
	End      time.Time   `json:"end"`

	// SLO are the criteria, as given ("p99<20ms", "errors<0.1%").
	SLO    []string       `json:"slo"`
	Search CapacitySearch `json:"search"`

	// Rate is the answer: the highest offered rate that met the SLO, in
	// requests per second (0 when none did). Low is the same rate, High the
	// lowest rate that failed (0 if none failed): the true capacity lies
	// in [Low, High).
	Rate  float64 `json:"rate"`
	Low   float64 `json:"low"`
	High  float64 `json:"high,omitempty"`
	Limit string  `json:"limit"`
	// ClientLimit is the lowest rate at which the client could not keep
	// up (0 if it always did).
	ClientLimit float64 `json:"client_limit,omitempty"`
	// ServerCPUPerRequest is the server's CPU time per request at Rate
	// (from the confirmation run), 0 when no server process was sampled.
	ServerCPUPerRequest time.Duration `json:"server_cpu_per_req_ns,omitempty"`
	// ServerQuota is the CPU quota the server ran under (nil: none): the
	// capacity is then that of ServerQuota.Cores CPUs.
	ServerQuota *CPUQuota `json:"server_quota,omitempty"`

	// Disturbed lists what could have disturbed the search and was not
	// cured by measuring again (a disturbed step that still bounds the
	// answer, a failed confirmation); BoundDisturbed says the answer's
	// upper bound rests on a disturbed step, and Unconfirmed that no
	// confirmation held: the answer is then not to be trusted.
	Disturbed      []string `json:"disturbed,omitempty"`
	BoundDisturbed bool     `json:"bound_disturbed,omitempty"`
	Unconfirmed    bool     `json:"unconfirmed,omitempty"`

	// Steps are the search's measurements in the order they ran.
	Steps []CapacityStep `json:"steps"`
	// Confirm is the longer run at Rate that checked the answer.
	Confirm  *CapacityStep `json:"confirm,omitempty"`
	Warnings []string      `json:"warnings,omitempty"`
}

// CapacitySearch are the search's settings, as run.
type CapacitySearch struct {
	MinRate      float64       `json:"min_rate"`
	MaxRate      float64       `json:"max_rate"`
	StartRate    float64       `json:"start_rate"`
	Growth       float64       `json:"growth"`
	Precision    float64       `json:"precision"`
	StepDuration time.Duration `json:"step_duration_ns"`
	Warmup       time.Duration `json:"warmup_ns"`
	MaxTime      time.Duration `json:"max_time_ns"`
	MaxSteps     int           `json:"max_steps"`
	// Concurrency caps the requests in flight; each step uses enough for
	// its rate at the SLO's latency (Little's law, twice over), up to it.
	Concurrency int `json:"concurrency"`
	// Arrivals is the steps' arrival process (Poisson by default: an
	// SLO promised to users holds under bursts, not only a metronome);
	// Seed its seed. Empty in results from before it was recorded,
	// whose steps were uniform.
	Arrivals Arrivals `json:"arrivals,omitempty"`
	Seed     uint64   `json:"seed,omitempty"`
}

// CapacityStep is one open-loop measurement at one offered rate, after
// a warm-up at that rate.
type CapacityStep struct {
	Offered float64 `json:"offered"` // requests/s scheduled
	// Achieved is completed requests per second of the measured window.
	Achieved float64 `json:"achieved"`
	// Sent is the fraction of the scheduled arrivals that were sent
	// (the rest were still waiting for a free worker at the end).
	Sent float64 `json:"sent"`
	// Due is the rate the schedule held over the window: Offered for
	// even pacing; for Poisson arrivals their seeded count over the
	// window, which a server that keeps up completes (not Offered,
	// which it misses by chance half the time).
	Due         float64       `json:"due,omitempty"`
	Concurrency int           `json:"concurrency"`
	Requests    int64         `json:"requests"`
	Failed      int64         `json:"failed"`
	P50         time.Duration `json:"p50_ns"` // latency from the intended send time
	P90         time.Duration `json:"p90_ns"`
	P99         time.Duration `json:"p99_ns"`
	P999        time.Duration `json:"p999_ns"`
	Max         time.Duration `json:"max_ns"`
	ServiceP99  time.Duration `json:"service_p99_ns"` // from the actual send
	LagP99      time.Duration `json:"lag_p99_ns"`     // how late sends were
	// ClientLagP99 is the part of the lag the client caused (Load.ClientLag):
	// late from when a worker was free; -1 when its Load has none (a file
	// written before the split).
	ClientLagP99 time.Duration `json:"client_lag_p99_ns,omitempty"`
	// ClientCPU is the client's CPU use as a fraction of its CPUs.
	ClientCPU float64 `json:"client_cpu"`
	// ServerCPU is the sampled server's CPU use in cores (0: not sampled),
	// ServerCPUPerRequest its CPU time per completed request.
	ServerCPU           float64       `json:"server_cpu,omitempty"`
	ServerCPUPerRequest time.Duration `json:"server_cpu_per_req_ns,omitempty"`

	// Failures are the step's failed requests by cause (failures.go).
	Failures []FailureCause `json:"failures,omitempty"`
	// OtherCPU is the CPU other processes used on the client's and the
	// server's CPUs over the window, in CPUs; Steal the fraction of those
	// CPUs' time the hypervisor gave another guest.
	OtherCPU float64 `json:"other_cpu,omitempty"`
	Steal    float64 `json:"steal,omitempty"`
	// Disturbed says what could have disturbed a step that did not pass
	// (other tenants, steal, the client's lag); Retried marks one measured
	// again, which the search does not count.
	Disturbed []string `json:"disturbed,omitempty"`
	Retried   bool     `json:"retried,omitempty"`

	KeptUp  bool   `json:"kept_up"`
	Verdict string `json:"verdict"` // StepPass, StepFail or StepClient
	Why     string `json:"why"`     // one line: what passed or failed, measured against what
	// Load is the step's whole measurement, histograms included, so any
	// percentile can be read again later.
	Load *Load `json:"load,omitempty"`
}

// NoSuccess reports whether the step ran and none of its requests
// succeeded (every one failed, or none completed).
func (s *CapacityStep) NoSuccess() bool {
	return s.Requests == s.Failed && (s.Requests > 0 || (s.Load != nil && s.Load.Interrupted > 0))
}

// Causes are the failures of every step and the confirmation, by cause.
func (c *Capacity) Causes() (causes []FailureCause, requests int64) {
	msgs := map[string]int64{}
	add := func(s *CapacityStep) {
		requests += s.Requests
		if s.Load != nil {
			for m, n := range s.Load.Failures {
				msgs[m] += n
			}
			return
		}
		for _, fc := range s.Failures { // a file without the loads: the top messages
			for _, m := range fc.Top {
				msgs[m.Message] += m.Count
			}
			if len(fc.Top) == 0 {
				msgs[fc.Cause] += fc.Count
			}
		}
	}
	for i := range c.Steps {
		add(&c.Steps[i])
	}
	if c.Confirm != nil {
		add(c.Confirm)
	}
	return FailureCauses(msgs), requests
}

// Passed reports whether the step met the SLO with the client keeping up.
func (s *CapacityStep) Passed() bool { return s.Verdict == StepPass }

// ErrorRate is the failed fraction of the step's requests.
func (s *CapacityStep) ErrorRate() float64 {
	if s.Requests == 0 {
		return 0
	}
	return float64(s.Failed) / float64(s.Requests)
}

// NewCapacityStep fills a step's figures from its load result (verdict
// and reason are the judge's). offered is the scheduled rate.
func NewCapacityStep(offered float64, l *Load) CapacityStep {
	s := CapacityStep{Offered: offered, Load: l, Concurrency: l.Options.Concurrency,
		Requests: l.Requests, Failed: l.Failed, Achieved: l.RPS(), ClientCPU: l.CPUUtil(), Failures: FailureCauses(l.Failures)}
	// A flow's schedule paces iterations: offered, achieved and sent are
	// iterations, the latency figures stay its requests'.
	done, cut := l.Paced()
	if l.Iterations != nil {
		s.Achieved = l.IPS()
	}
	if d := l.Options.Duration; d > 0 && offered > 0 {
		scheduled := math.Ceil(offered*d.Seconds() - 1e-9) // arrivals at 0, 1/r, 2/r… before d
		if l.Scheduled > 0 {
			scheduled = float64(l.Scheduled) // Poisson's count is its own: judged against it, not the mean
		}
		s.Sent = math.Min(1, float64(done+cut)/scheduled)
		if l.Scheduled > 0 {
			s.Due = scheduled / d.Seconds()
		}
	}
	if h := l.Latency; h != nil && h.Count() > 0 {
		s.P50, s.P90, s.P99, s.P999, s.Max = h.Quantile(.5), h.Quantile(.9), h.Quantile(.99), h.Quantile(.999), h.Max()
	}
	if h := l.Service; h != nil && h.Count() > 0 {
		s.ServiceP99 = h.Quantile(.99)
	}
	if h := l.Lag; h != nil && h.Count() > 0 {
		s.LagP99 = h.Quantile(.99)
	}
	s.ClientLagP99 = -1
	if h := l.ClientLag; h != nil {
		s.ClientLagP99 = h.Quantile(.99)
	}
	return s
}

// SetServerCPU records the server's CPU time over the step's window.
func (s *CapacityStep) SetServerCPU(cpu time.Duration) {
	if cpu <= 0 || s.Load == nil {
		return
	}
	if w := s.Load.Measured().Seconds(); w > 0 {
		s.ServerCPU = cpu.Seconds() / w
	}
	if s.Requests > 0 {
		s.ServerCPUPerRequest = cpu / time.Duration(s.Requests)
	}
}

// Answer is the step whose measurement stands for the answer: the
// confirmation run, else the passing step at Rate; nil if none passed.
func (c *Capacity) Answer() *CapacityStep {
	if c.Confirm != nil && c.Confirm.Load != nil {
		return c.Confirm
	}
	for i := range c.Steps {
		if s := &c.Steps[i]; s.Passed() && s.Offered == c.Rate && s.Load != nil {
			return s
		}
	}
	return nil
}

// TrialLoad is the measurement a study's trial shows for this search:
// the answer's, or when no rate passed the lowest rate's (nil if no step
// ran).
func (c *Capacity) TrialLoad() *Load {
	if a := c.Answer(); a != nil {
		return a.Load
	}
	var low *CapacityStep
	for i := range c.Steps {
		if s := &c.Steps[i]; s.Load != nil && (low == nil || s.Offered < low.Offered) {
			low = s
		}
	}
	if low == nil {
		return nil
	}
	return low.Load
}

// Untrusted says why the search's answer cannot stand for the server's
// capacity ("" when it can): the client was the limit, so the answer is
// the client's lower bound; the step bounding it was disturbed; or no
// confirmation held. Reports exclude such a search from medians
// and comparisons, and say so.
func (c *Capacity) Untrusted() string {
	switch {
	case c.Limit == LimitClient:
		return "the client was the limit"
	case c.BoundDisturbed:
		return "disturbed"
	case c.Unconfirmed:
		return "not confirmed"
	}
	return ""
}

// PerCore is the capacity per server core: per core of its quota when
// the server ran under one (the server at its limit uses its quota), else
// requests per second per core-second of server CPU at the answer; 0
// when neither is known.
func (c *Capacity) PerCore() float64 {
	if q := c.ServerQuota; q != nil && q.Cores > 0 {
		return c.Rate / q.Cores
	}
	if c.ServerCPUPerRequest <= 0 {
		return 0
	}
	return 1 / c.ServerCPUPerRequest.Seconds()
}

// WriteJSON writes c as an indented result file.
func (c *Capacity) WriteJSON(w io.Writer) error {
	if err := EncodeJSON(w, c, "  "); err != nil {
		return fmt.Errorf("capacity: write result: %w", err)
	}
	return nil
}

// ReadCapacity reads a capacity result, refusing other schemas and steps
// whose measurements lack their histograms.
func ReadCapacity(rd io.Reader) (*Capacity, error) {
	var c Capacity
	if err := json.NewDecoder(io.LimitReader(rd, MaxFileSize+1)).Decode(&c); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCapacity, err)
	}
	if !readable(c.Schema, CapacitySchema) {
		return nil, fmt.Errorf("%w: schema %q, want %q", ErrCapacity, c.Schema, CapacitySchema)
	}
	c.upgrade()
	check := func(what string, s *CapacityStep) error {
		if s.Load != nil && (s.Load.Latency == nil || s.Load.Service == nil || s.Load.Lag == nil) {
			return fmt.Errorf("%w: %s at %g/s: missing histograms", ErrCapacity, what, s.Offered)
		}
		if math.IsNaN(s.Offered) || s.Offered < 0 {
			return fmt.Errorf("%w: %s: bad offered rate %g", ErrCapacity, what, s.Offered)
		}
		return nil
	}
	for i := range c.Steps {
		if err := check(fmt.Sprintf("step %d", i+1), &c.Steps[i]); err != nil {
			return nil, err
		}
	}
	if c.Confirm != nil {
		if err := check("confirmation", c.Confirm); err != nil {
			return nil, err
		}
	}
	return &c, nil
}

// FromCapacity wraps one capacity search as a study of one cell and one
// trial, marked SingleRun, whose load is the answer's measurement (the
// confirmation run): renderers show the answer's figures and the curve.
func FromCapacity(c *Capacity) *Study {
	scenario := c.Scenario
	if scenario == "" {
		scenario = "capacity"
	}
	t := Trial{Cell: scenario, Capacity: c, Load: c.TrialLoad()}
	title := "wirebench capacity: " + scenario
	if t.Load != nil {
		if _, target := LoadTransport(&Load{Scenario: c.Scenario, Config: c.Config}); target != "" {
			title += " " + target
		}
	}
	cell := Cell{ID: scenario, Group: scenario, Label: scenario, Baseline: true,
		Load: cellLoad(&Load{Scenario: c.Scenario, Config: c.Config}, c.SLO)}
	s := &Study{
		Schema: StudySchema, Study: "capacity", Title: title, SingleRun: true,
		Env: c.Env, Start: c.Start, End: c.End,
		Trials: []Trial{t}, Warnings: c.Warnings,
	}
	s.Cells = []Cell{s.onLink(cell, c.Link)}
	return s
}
