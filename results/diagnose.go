package results

import (
	"fmt"
	"time"
)

// The one definition of "the client kept up" (fairness rule 4), for a
// load run's warnings (Diagnose) and a capacity step's verdict alike: it
// used at most MaxClientCPU of its CPUs and sent at least MinSent of the
// arrivals its open-loop schedule held.
//
// MinSent is 0.99, not 0.95: a capacity step is judged on its rate, and a
// client that sent 95% would credit the server with a rate 5% above what
// it was offered, more than the search's precision; a load run short by
// 4% is as misleading to its reader. Poisson schedules are measured
// against their own draw (Scheduled), so the draw's spread does not count.
const (
	MaxClientCPU = 0.90
	MinSent      = 0.99
)

// lagLimit is the schedule lag p99 above which Diagnose says requests
// left late in open loop.
const lagLimit = 5 * time.Millisecond

// Diagnose returns the warnings a reader must see next to the numbers.
func Diagnose(r *Load) []string {
	var w []string
	if u := r.CPUUtil(); u > MaxClientCPU {
		w = append(w, fmt.Sprintf("client CPU at %.0f%% of its %d CPUs: the client may be the bottleneck; pin it apart from the server (--cpu) or give it more CPUs",
			u*100, r.CPU.CPUs))
	}
	if r.Options.OpenLoop() && r.Lag.Count() > 0 {
		if p := r.Lag.Quantile(0.99); p > lagLimit {
			w = append(w, fmt.Sprintf("schedule lag p99 %v: requests left late (client saturated or too few connections, -c %d); latency includes the wait",
				p, r.Options.Concurrency))
		}
	}
	if r.Options.OpenLoop() && r.Options.Rate > 0 && len(r.Options.Stages) == 0 && r.Measured() > 0 {
		// Requests sent, answered or not: a server that never answers
		// holds all -c slots, and the schedule's later requests are never
		// sent — say so rather than report a quiet short run.
		sent := r.Requests + r.Interrupted
		due := r.Options.Rate * r.Measured().Seconds()
		if r.Scheduled > 0 { // Poisson arrivals: the draw's own count
			due = float64(r.Scheduled)
		}
		if r.Options.Requests > 0 {
			due = min(due, float64(r.Options.Requests))
		}
		if float64(sent) < MinSent*due {
			w = append(w, fmt.Sprintf("achieved %.0f of %.0f req/s: sent %d of the %.0f requests due; the rest were never sent (all -c %d slots were in flight, or the client was too slow)",
				float64(sent)/r.Measured().Seconds(), r.Options.Rate, sent, due, r.Options.Concurrency))
		}
	}
	if r.Interrupted > 0 {
		w = append(w, fmt.Sprintf("%d requests in flight were cut at the end of the run and are not counted", r.Interrupted))
	}
	return w
}
