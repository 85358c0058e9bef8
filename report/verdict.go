package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/wirebench/wirebench/results"
)

// RunVerdict is what a single load run says about itself before any
// number: that it failed its thresholds, or passed them, and that it was
// cut short. Empty for a run with neither. Reports print it first, and
// compare says which side it concerns: a run that exited 99 must not
// render as a clean report.
func RunVerdict(r *results.Load) []string {
	var out []string
	var failed, passed []string
	for _, th := range r.Thresholds {
		s := fmt.Sprintf("%s (measured %s)", th.Expr, th.Measured)
		if th.Pass {
			passed = append(passed, s)
		} else {
			failed = append(failed, s)
		}
	}
	if len(failed) > 0 {
		line := "FAILED its thresholds: " + strings.Join(failed, "; ")
		if len(passed) > 0 {
			line += "; passed: " + strings.Join(passed, "; ")
		}
		out = append(out, line)
	} else if len(passed) > 0 {
		out = append(out, "Passed its thresholds: "+strings.Join(passed, "; "))
	}
	if r.Stop != nil && r.Stop.Interrupted {
		line := "INTERRUPTED"
		if r.Stop.Signal != "" {
			line += " by " + r.Stop.Signal
		}
		line += fmt.Sprintf(" after %v", r.Measured().Round(time.Millisecond))
		if d := r.Options.Duration; d > 0 {
			line += fmt.Sprintf(" of the planned %v", d)
		}
		out = append(out, line+": a partial run; its figures cover only that window")
	}
	return out
}

// FailedThresholds reports whether a run failed any of its thresholds.
func FailedThresholds(r *results.Load) bool {
	for _, th := range r.Thresholds {
		if !th.Pass {
			return true
		}
	}
	return false
}

// verdict is the report's verdict: a single run's, else none (a study's
// trials carry no thresholds).
func verdict(rep *Report) []string {
	if lr, ok := singleRun(rep.Results); ok {
		return RunVerdict(lr)
	}
	if l := interruptedLine(rep.Results.Stop); l != "" {
		return []string{l}
	}
	return nil
}

// interruptedLine is a cut-short study's first line: how many trials ran
// and which cells lack trials, whose comparisons are then not decided.
func interruptedLine(s *results.StudyStop) string {
	if s == nil || !s.Interrupted {
		return ""
	}
	l := fmt.Sprintf("INTERRUPTED — %d of %d trials ran (stopped by %s)", s.TrialsRun, s.TrialsPlanned, cmpOr(s.Signal, "a signal"))
	switch {
	case len(s.Incomplete) == 0:
		return l + ": every cell ran all its trials."
	case len(s.Complete) == 0:
		return l + ": no cell ran all its trials, so no comparison is decided."
	}
	return fmt.Sprintf("%s: complete cells %s; incomplete %s, whose comparisons are not decided.", l,
		strings.Join(s.Complete, ", "), strings.Join(s.Incomplete, ", "))
}
