package flags

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/results"
)

// Dist are load's flags for one test run as n segments (separate
// processes, machines or pods) that start together: --start-at and the
// --barrier family.
type Dist struct {
	StartAt      string
	Barrier      string
	BarrierLead  time.Duration
	BarrierLimit time.Duration
}

// Register adds the start flags.
func (d *Dist) Register(fs *pflag.FlagSet) {
	fs.StringVar(&d.StartAt, "start-at", "", "start the schedule at this `time` (RFC 3339 or Unix seconds), after connecting: segments started together")
	fs.StringVar(&d.Barrier, "barrier", "", "start when all n segments have reached this `dir` (a shared volume), --barrier-lead after the last")
	d.BarrierLead, d.BarrierLimit = load.DefaultBarrierLead, load.DefaultBarrierTimeout
	fs.Var(Duration{D: &d.BarrierLead}, "barrier-lead", "time from the last segment's arrival at --barrier to the start")
	fs.Var(Duration{D: &d.BarrierLimit}, "barrier-timeout", "give up when the other segments have not reached --barrier in this `long`")
}

// Apply parses --segment (i/n, or auto/n from $JOB_COMPLETION_INDEX as
// getenv gives it) and the start flags into o.
func (d *Dist) Apply(segment string, o *load.Options, getenv func(string) string) error {
	var err error
	if segment != "" {
		if o.Segment, err = results.ParseSegmentEnv(segment, getenv); err != nil {
			return Usagef("--segment: %s", Message(err))
		}
	}
	if d.StartAt != "" && d.Barrier != "" {
		return Usagef("--start-at and --barrier both set the start: give one")
	}
	if d.StartAt != "" {
		if o.StartAt, err = load.ParseStartAt(d.StartAt); err != nil {
			return Usagef("--start-at: %s", Message(err))
		}
	}
	if d.Barrier != "" {
		if o.Segment.N < 1 {
			return Usagef("--barrier needs --segment i/n (how many segments to wait for)")
		}
		if d.BarrierLead <= 0 || d.BarrierLimit <= 0 {
			return Usagef("--barrier-lead and --barrier-timeout must be > 0")
		}
		o.Barrier = load.FileBarrier{Dir: d.Barrier, Segment: o.Segment, Lead: d.BarrierLead, Timeout: d.BarrierLimit}
	}
	return nil
}
