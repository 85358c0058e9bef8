package capacity

import (
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/results"
)

// TestLagDisturbsOnlyWhenTheClientsOwn: a failed step whose arrivals
// waited for a free worker (every worker busy with a slow server's
// replies) was the server's failure, not a disturbance; the client's own
// lateness past a quarter of the SLO's bound is one. A step without the
// split (ClientLagP99 -1, an older file) is judged by its whole lag.
func TestLagDisturbsOnlyWhenTheClientsOwn(t *testing.T) {
	o := Options{SLO: slo(t, "p99<5ms")}
	for _, tc := range []struct {
		lag, own time.Duration
		want     bool
	}{
		{2 * time.Millisecond, 50 * time.Microsecond, false}, // a 5 ms SLO: 1.25 ms is a quarter
		{2 * time.Second, 100 * time.Microsecond, false},
		{2 * time.Millisecond, 2 * time.Millisecond, true},
		{2 * time.Millisecond, -1, true},
		{time.Millisecond, -1, false},
	} {
		st := results.CapacityStep{Verdict: results.StepFail, Requests: 100, LagP99: tc.lag, ClientLagP99: tc.own}
		disturbance(&st, Measurement{}, o)
		got := strings.Contains(strings.Join(st.Disturbed, " "), "sent late")
		if got != tc.want {
			t.Errorf("lag %v, the client's own %v: disturbed %v %q, want %v", tc.lag, tc.own, got, st.Disturbed, tc.want)
		}
	}
}
