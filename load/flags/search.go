package flags

import (
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/wirebench/wirebench/capacity"
	"github.com/wirebench/wirebench/load/replay"
	"github.com/wirebench/wirebench/results"
)

// SearchConcurrency caps a replay search's requests in flight unless -c
// says otherwise: each step sizes its workers to its rate and SLO up to it.
const SearchConcurrency = 256

// Search are a capacity search's flags: wirebench capacity's, in rates
// (RegisterRates), or replay --slo's, in speeds of the recording
// (RegisterSpeeds). Read reads the text ones into Options.
type Search struct {
	Options   capacity.Options
	SLO       []string
	ServerPID int
	Quota     string             // capacity's --server-cpu-quota
	Speeds    replay.SpeedSearch // replay's --min-speed, --max-speed
	precision string
	noConfirm bool
}

// RegisterRates adds wirebench capacity's search flags.
func (s *Search) RegisterRates(fs *pflag.FlagSet) {
	o := &s.Options
	fs.StringArrayVar(&s.SLO, "slo", nil, "`criterion` every step must meet (repeatable): p99<20ms, p50<5ms, errors<0.1% (without an errors criterion, errors<1% is added)")
	fs.StringVar(&s.precision, "precision", "5%", "stop when the first failing rate is within this `fraction` of the last passing one (5% or 0.05)")
	fs.Float64Var(&o.MaxRate, "max-rate", capacity.DefaultMaxRate, "highest `rate` (req/s) to try")
	fs.Float64Var(&o.MinRate, "min-rate", capacity.DefaultMinRate, "lowest `rate` (req/s) to try")
	fs.Float64Var(&o.StartRate, "start-rate", capacity.DefaultStartRate, "first step's `rate` (req/s)")
	fs.Float64Var(&o.Growth, "growth", capacity.DefaultGrowth, "`factor` between steps until one fails")
	o.StepDuration, o.Warmup, o.MaxTime = capacity.DefaultStepDuration, capacity.DefaultWarmup, capacity.DefaultMaxTime
	fs.Var(Duration{D: &o.StepDuration}, "step-duration", "each step's measured `window`")
	fs.Var(warmupFlag{&o.Warmup}, "warmup", "warm-up at each step's rate before its window (`duration`; 0: none)")
	fs.Var(Duration{D: &o.ConfirmDuration}, "confirm-duration", "the confirmation run at the answer (`duration`; default twice --step-duration)")
	fs.BoolVar(&s.noConfirm, "no-confirm", false, "skip the confirmation run")
	fs.Var(Duration{D: &o.MaxTime}, "max-time", "bound on the whole search (`duration`)")
	fs.IntVar(&o.MaxSteps, "max-steps", capacity.DefaultMaxSteps, "bound on the steps (`N`)")
	fs.IntVarP(&o.Concurrency, "concurrency", "c", capacity.DefaultConcurrency, "cap on requests in flight (`N`); each step uses what its rate needs at the SLO, up to it")
	fs.IntVar(&s.ServerPID, "server-pid", 0, "sample this server `PID`'s CPU over each step (server CPU per request, capacity per core)")
	fs.StringVar(&s.Quota, "server-cpu-quota", "auto", "with --server-pid: cap that server at this many `CPUs` (0.5) for the search, off, or auto: a short calibration measures both sides' CPU per request and gives the server the largest quota the client can outrun")
	fs.Lookup("confirm-duration").DefValue = "" // its help says the default
}

// RegisterSpeeds adds replay's --slo and the speed search's flags.
func (s *Search) RegisterSpeeds(fs *pflag.FlagSet) {
	fs.StringArrayVar(&s.SLO, "slo", nil, "search the highest --speed that meets this `criterion` (repeatable): p99<20ms, errors<0.1% (docs/replay.md)")
	fs.Float64Var(&s.Speeds.MinSpeed, "min-speed", replay.DefaultMinSpeed, "--slo: lowest `speed` to try")
	fs.Float64Var(&s.Speeds.MaxSpeed, "max-speed", replay.DefaultMaxSpeed, "--slo: highest `speed` to try")
	fs.StringVar(&s.precision, "precision", "5%", "--slo: stop when the first failing speed is within this `fraction` of the last passing one")
	o := &s.Options
	o.StepDuration, o.Warmup, o.MaxTime = capacity.DefaultStepDuration, capacity.DefaultWarmup, capacity.DefaultMaxTime
	fs.Var(Duration{D: &o.StepDuration}, "step-duration", "--slo: each step's `length`, rounded to whole passes of the recording (at least one)")
	fs.Var(warmupFlag{&o.Warmup}, "warmup", "--slo: replay this `long` at each step's speed before its window (0: none)")
	fs.BoolVar(&s.noConfirm, "no-confirm", false, "--slo: skip the confirmation run at the answer")
	fs.Var(Duration{D: &o.MaxTime}, "max-time", "--slo: bound on the whole search (`duration`)")
	fs.IntVar(&s.ServerPID, "server-pid", 0, "--slo: sample this server `PID`'s CPU over each step")
}

// speedOnly are the flags that mean nothing without replay's --slo, and
// notWithSpeeds those a search decides itself.
var (
	speedOnly     = []string{"min-speed", "max-speed", "precision", "step-duration", "warmup", "no-confirm", "max-time", "server-pid"}
	notWithSpeeds = []string{"speed", "loop", "duration", "record", "dry-run", "threshold", "latency", "percentiles", "hdr-out"}
)

// CheckSpeeds refuses replay's flags that do not go with (or without)
// --slo.
func (s *Search) CheckSpeeds(fs *pflag.FlagSet) error {
	if len(s.SLO) == 0 {
		for _, n := range speedOnly {
			if fs.Changed(n) {
				return Usagef("--%s applies to the speed search (--slo)", n)
			}
		}
		return nil
	}
	for _, n := range notWithSpeeds {
		if fs.Changed(n) {
			return Usagef("--slo searches the speed, in steps of whole passes: drop --%s", n)
		}
	}
	if lo, hi := s.Speeds.MinSpeed, s.Speeds.MaxSpeed; !(lo > 0) || !(hi >= lo) || hi > 1e9 {
		return Usagef("--min-speed %g, --max-speed %g: want 0 < min ≤ max ≤ 1e9", lo, hi)
	}
	return nil
}

// Read reads --slo, --precision and --no-confirm into Options.
func (s *Search) Read() error {
	o := &s.Options
	for _, e := range s.SLO {
		th, err := results.ParseThreshold(e)
		if err != nil {
			return Usagef("--slo: %s", Message(err))
		}
		if err := capacity.CheckSLO(th); err != nil {
			return Usagef("--slo %s", strings.TrimPrefix(Message(err), capacity.ErrOptions.Error()+": "))
		}
		o.SLO = append(o.SLO, th)
	}
	p, err := capacity.ParsePrecision(s.precision)
	if err != nil {
		return Usagef("--%s", strings.TrimPrefix(err.Error(), capacity.ErrOptions.Error()+": "))
	}
	o.Precision = p
	if s.noConfirm {
		o.ConfirmDuration = -1
	}
	return nil
}

// warmupFlag reads --warmup: 0 is no warm-up, which the search's options
// write negative (their zero value is the default).
type warmupFlag struct{ d *time.Duration }

func (f warmupFlag) String() string {
	if f.d == nil || *f.d < 0 {
		return "0s"
	}
	return f.d.String()
}

func (f warmupFlag) Type() string { return "duration" }

func (f warmupFlag) Set(s string) error {
	if err := (Duration{D: f.d}).Set(s); err != nil {
		return err
	}
	if *f.d == 0 {
		*f.d = -1
	}
	return nil
}
