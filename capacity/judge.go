package capacity

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/wirebench/wirebench/results"
)

// Limits of "the client kept up" (fairness rule 4), one definition for
// load runs and capacity: a step in which the client used more CPU than
// maxClientCPU of its CPUs, or sent fewer than minSent of the scheduled
// arrivals, says nothing of the server.
const (
	maxClientCPU = results.MaxClientCPU
	minSent      = results.MinSent
)

// judge sets s's verdict, reason and KeptUp from its figures and the SLO.
//
// The server is blamed only for what it did after a request was sent:
// an SLO missed on service time (from the actual send) or errors. A step
// whose latency from the intended send time missed the SLO while its
// service time met it lost its time before the send — in the client's
// scheduler or waiting for a free worker — and is the client's. need is
// the workers the step's rate needs at the SLO's latency (Little's law,
// twice over); with fewer, waiting for a worker is the client's limit too.
func judge(s *results.CapacityStep, slo []results.Threshold, need int) {
	defer func() { s.KeptUp = s.Verdict != results.StepClient }()
	l := s.Load
	switch {
	case s.Requests == 0 && l != nil && l.Interrupted > 0:
		s.Verdict, s.Why = results.StepFail, fmt.Sprintf("no request completed: %d cut at the end of the step (the server did not answer in time)", l.Interrupted)
		return
	case s.Requests == 0:
		s.Verdict, s.Why = results.StepClient, "no request was sent"
		return
	case s.ClientCPU >= maxClientCPU:
		s.Verdict, s.Why = results.StepClient, fmt.Sprintf("client CPU %.0f%% of its %d CPU(s): the client was the limit", 100*s.ClientCPU, l.CPU.CPUs)
		return
	}
	var failed, svcFailed, errFailed []string
	for _, th := range slo {
		if th.Metric() == "errors" {
			if got, ok := th.Check(l); !ok {
				errFailed = append(errFailed, fmt.Sprintf("%s (measured %s)", th.Expr, got))
			}
			continue
		}
		got, ok := th.CheckLatency(l.Latency)
		if ok {
			continue
		}
		failed = append(failed, fmt.Sprintf("%s (measured %s)", th.Expr, got))
		if svc, ok := th.CheckLatency(l.Service); !ok {
			svcFailed = append(svcFailed, fmt.Sprintf("%s (%s from the send)", th.Expr, svc))
		}
	}
	switch {
	case len(errFailed) > 0:
		s.Verdict, s.Why = results.StepFail, "server: "+strings.Join(errFailed, "; ")
		if len(s.Failures) > 0 {
			s.Why += ": " + results.CausesLine(s.Failures, s.Requests)
		}
	case len(svcFailed) > 0:
		s.Verdict, s.Why = results.StepFail, "server: "+strings.Join(svcFailed, "; ")
	case len(failed) > 0:
		why := fmt.Sprintf("%s, but service time met the SLO: requests waited in the client before they were sent (lag p99 %s)",
			strings.Join(failed, "; "), results.FormatDuration(s.LagP99))
		if s.Concurrency < need {
			why += fmt.Sprintf("; %d workers, the rate needs %d at this SLO (raise -c)", s.Concurrency, need)
		}
		s.Verdict, s.Why = results.StepClient, why
	case s.Sent < minSent:
		s.Verdict, s.Why = results.StepClient, fmt.Sprintf("sent %.1f%% of the scheduled arrivals (the rest waited for a free worker)", 100*s.Sent)
	case s.Achieved < minSent*cmp.Or(s.Due, s.Offered):
		s.Verdict, s.Why = results.StepFail, fmt.Sprintf("server: completed %.0f/s of %.0f/s offered", s.Achieved, cmp.Or(s.Due, s.Offered))
	default:
		s.Verdict, s.Why = results.StepPass, sloLine(slo, l)
	}
}

// sloLine is what a passing step measured against each criterion.
func sloLine(slo []results.Threshold, l *results.Load) string {
	parts := make([]string, len(slo))
	for i, th := range slo {
		got, _ := th.Check(l)
		parts[i] = fmt.Sprintf("%s (measured %s)", th.Expr, got)
	}
	return strings.Join(parts, "; ")
}
