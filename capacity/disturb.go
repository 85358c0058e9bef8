package capacity

import (
	"fmt"
	"slices"
	"time"

	"github.com/wirebench/wirebench/results"
)

// Limits past which a step that did not pass may owe its verdict to
// something other than the server.
const (
	maxSteal = 0.05 // of the CPUs' time, given to another guest
	// maxOtherCPU: other processes busy on the client's and server's CPUs,
	// in CPUs, while the server used less than its allowance.
	maxOtherCPU = 0.25
	// serverBusy: a server using this much of its allowance was at its
	// own limit, whatever else ran beside it.
	serverBusy = 0.9
	// maxLagShare: the client's schedule lag p99 against the SLO's bound.
	maxLagShare = 0.25
)

// disturbance records on a step that did not pass what could have made
// it fail other than the server: CPU steal, other processes on its CPUs
// while the server used less than its allowance, the client sending late.
// A step that passed passed, whatever ran beside it.
func disturbance(st *results.CapacityStep, m Measurement, o Options) {
	if m.Load != nil {
		if w := m.Load.Measured().Seconds(); w > 0 {
			st.OtherCPU = m.OtherCPU.Seconds() / w
		}
	}
	st.Steal = m.Steal
	if st.Passed() {
		return
	}
	if st.NoSuccess() && results.LoadIndependent(st.Failures) {
		// Refused, no handshake, a 403: nothing beside the step explains
		// a failure no rate changes, and measuring it again only hammers
		// the target.
		return
	}
	if st.Steal > maxSteal {
		st.Disturbed = append(st.Disturbed, fmt.Sprintf("CPU steal %.0f%% (the hypervisor ran another guest)", 100*st.Steal))
	}
	starved := o.ServerCores == 0 || st.ServerCPU < serverBusy*o.ServerCores
	if st.OtherCPU > maxOtherCPU && starved {
		why := fmt.Sprintf("other processes used %.2f CPU of the client's and server's CPUs", st.OtherCPU)
		if o.ServerCores > 0 && st.ServerCPU > 0 {
			why += fmt.Sprintf(" while the server used %.2f of its %.3g", st.ServerCPU, o.ServerCores)
		}
		st.Disturbed = append(st.Disturbed, why)
	}
	// Only the client's own lateness disturbs a step: arrivals that waited
	// for a free worker waited for the server (every worker busy with its
	// slow replies), which is the server's failure, not a disturbance.
	lag := st.ClientLagP99
	if lag < 0 {
		lag = st.LagP99 // a step measured before the split
	}
	if b := sloBound(o.SLO); b > 0 && lag > time.Duration(maxLagShare*float64(b)) {
		st.Disturbed = append(st.Disturbed, fmt.Sprintf("the client sent late: its own lag p99 %s (from a free worker) against the SLO's %s", results.FormatDuration(lag), results.FormatDuration(b)))
	}
}

// sloBound is the SLO's loosest latency bound (0: none).
func sloBound(slo []results.Threshold) time.Duration {
	var bound time.Duration
	for _, th := range slo {
		if b, ok := th.Bound(); ok && b > bound {
			bound = b
		}
	}
	return bound
}

// boundDisturbed marks a search whose answer's upper bound — the step at
// the lowest rate that failed or the client could not keep up with — was
// disturbed even after the retries, and lists every disturbed step that
// counted.
func boundDisturbed(c *results.Capacity) {
	up := c.High
	if c.ClientLimit > 0 && (up == 0 || c.ClientLimit < up) {
		up = c.ClientLimit
	}
	for i := range c.Steps {
		s := &c.Steps[i]
		if s.Retried || len(s.Disturbed) == 0 {
			continue
		}
		line := fmt.Sprintf("the step at %.4g/s (%s): %s", s.Offered, s.Verdict, joinReasons(s.Disturbed))
		if !slices.Contains(c.Disturbed, line) {
			c.Disturbed = append(c.Disturbed, line)
		}
		if up > 0 && s.Offered == up {
			c.BoundDisturbed = true
		}
	}
	if c.BoundDisturbed {
		c.Warnings = append(c.Warnings, fmt.Sprintf("the answer's upper bound, %.4g/s, rests on a step that was disturbed after %d retries: the answer cannot be trusted", up, retried(c)))
	}
}

func retried(c *results.Capacity) int {
	n := 0
	for _, s := range c.Steps {
		if s.Retried {
			n++
		}
	}
	return n
}

func joinReasons(r []string) string {
	out := ""
	for i, s := range r {
		if i > 0 {
			out += "; "
		}
		out += s
	}
	return out
}
