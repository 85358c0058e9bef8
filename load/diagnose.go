package load

import (
	"fmt"
	"time"
)

// Limits above which Diagnose says the client, not the server, may have
// set the numbers (fairness rule 4).
const (
	busyCPU   = 0.90                 // client CPU use, fraction of its CPUs
	lagLimit  = 5 * time.Millisecond // schedule lag p99 in open loop
	rateShort = 0.95                 // achieved / intended open-loop rate
)

// Diagnose returns the warnings a reader must see next to the numbers.
func Diagnose(r *Result) []string {
	var w []string
	if u := r.CPUUtil(); u > busyCPU {
		w = append(w, fmt.Sprintf("client CPU at %.0f%% of its %d CPUs: the client may be the bottleneck; pin it apart from the server (--cpu) or give it more CPUs",
			u*100, r.CPU.CPUs))
	}
	if r.Options.open() && r.Lag.Count() > 0 {
		if p := r.Lag.Quantile(0.99); p > lagLimit {
			w = append(w, fmt.Sprintf("schedule lag p99 %v: requests left late (client saturated or too few connections, -c %d); latency includes the wait",
				p, r.Options.Concurrency))
		}
		if r.Options.Rate > 0 && len(r.Options.Stages) == 0 && r.Elapsed() > 0 {
			if got := r.RPS(); got < rateShort*r.Options.Rate {
				w = append(w, fmt.Sprintf("achieved %.0f req/s of the %.0f requested", got, r.Options.Rate))
			}
		}
	}
	if r.Interrupted > 0 {
		w = append(w, fmt.Sprintf("%d requests in flight were cut at the end of the run and are not counted", r.Interrupted))
	}
	return w
}
