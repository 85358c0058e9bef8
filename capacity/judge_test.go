package capacity

import (
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/results"
)

// TestJudge: who is blamed for what a step measured.
func TestJudge(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	type fig struct {
		svc, lag  time.Duration
		failed    float64
		clientCPU float64
	}
	for _, tc := range []struct {
		name    string
		f       fig
		edit    func(l *results.Load)
		need    int
		verdict string
		why     string
	}{
		{name: "fast", f: fig{svc: ms, clientCPU: .2}, verdict: results.StepPass, why: "p99<20ms (measured 1.00ms)"},
		{name: "slow server", f: fig{svc: 50 * ms, clientCPU: .2}, verdict: results.StepFail, why: "server: p99<20ms (50.02ms from the send)"},
		{name: "errors", f: fig{svc: ms, failed: .01, clientCPU: .2}, verdict: results.StepFail, why: "server: errors<0.1% (measured 1.000%)"},
		{name: "client CPU", f: fig{svc: 50 * ms, clientCPU: .95}, verdict: results.StepClient, why: "client CPU 95% of its 1 CPU(s)"},
		{name: "late sends", f: fig{svc: ms, lag: 40 * ms, clientCPU: .3}, verdict: results.StepClient, why: "requests waited in the client before they were sent (lag p99 40.03ms)"},
		{name: "too few workers", f: fig{svc: ms, lag: 40 * ms, clientCPU: .3}, need: 400, verdict: results.StepClient, why: "the rate needs 400 at this SLO (raise -c)"},
		{name: "unsent arrivals", f: fig{svc: ms, clientCPU: .3}, edit: func(l *results.Load) { l.Requests = l.Requests * 9 / 10 },
			verdict: results.StepClient, why: "sent 90.0% of the scheduled arrivals"},
		{name: "sent, not completed", f: fig{svc: ms, clientCPU: .3}, edit: func(l *results.Load) {
			l.Interrupted = l.Requests / 10
			l.Requests -= l.Interrupted
		}, verdict: results.StepFail, why: "server: completed 900/s of 1000/s offered"},
		{name: "nothing answered", f: fig{svc: ms, clientCPU: .3}, edit: func(l *results.Load) { l.Interrupted, l.Requests = l.Requests, 0 },
			verdict: results.StepFail, why: "no request completed"},
		// Poisson arrivals: a window whose seeded draw held 960 arrivals
		// and sent them all is judged against 960, not the 1000 of the
		// mean rate, which a draw misses by chance about half the time.
		{name: "poisson draw below the mean", f: fig{svc: ms, clientCPU: .3}, edit: func(l *results.Load) { l.Requests, l.Scheduled = 960, 960 },
			verdict: results.StepPass, why: "p99<20ms"},
		{name: "poisson draw not completed", f: fig{svc: ms, clientCPU: .3}, edit: func(l *results.Load) { l.Requests, l.Interrupted, l.Scheduled = 900, 60, 960 },
			verdict: results.StepFail, why: "server: completed 900/s of 960/s offered"},
		{name: "nothing sent", f: fig{svc: ms, clientCPU: .3}, edit: func(l *results.Load) { l.Requests = 0 }, verdict: results.StepClient, why: "no request was sent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := fakeLoad(func(float64) (time.Duration, time.Duration, float64, float64) {
				return tc.f.svc, tc.f.lag, tc.f.failed, tc.f.clientCPU
			}, 1000, 50, time.Second)
			if tc.edit != nil {
				tc.edit(l)
			}
			s := results.NewCapacityStep(1000, l)
			judge(&s, slo(t, "p99<20ms", "errors<0.1%"), max(tc.need, 1))
			if s.Verdict != tc.verdict || !strings.Contains(s.Why, tc.why) {
				t.Errorf("verdict %s, why %q; want %s, %q", s.Verdict, s.Why, tc.verdict, tc.why)
			}
			if s.KeptUp != (tc.verdict != results.StepClient) {
				t.Errorf("kept up %v with verdict %s", s.KeptUp, s.Verdict)
			}
		})
	}
}

func TestQuotaFor(t *testing.T) {
	us := time.Microsecond
	for _, c := range []struct {
		client, server         time.Duration
		clientCPUs, serverCPUs int
		want                   float64
	}{
		{60 * us, 60 * us, 1, 1, 0.45}, // as costly as each other: under half a CPU
		{30 * us, 60 * us, 1, 1, 0.9},  // a client twice as cheap: nearly the whole CPU
		{20 * us, 60 * us, 1, 1, 0},    // the client outruns the server as it is
		{100 * us, 10 * us, 1, 1, 0.1}, // a very cheap server: the floor
		{60 * us, 60 * us, 2, 4, 0.9},  // two client CPUs
		{0, 60 * us, 1, 1, 0},          // not measured
		{61 * us, 100 * us, 1, 1, 0.7}, // rounded down to 0.05: 0.737… → 0.7
	} {
		if got := QuotaFor(c.client, c.server, c.clientCPUs, c.serverCPUs); got != c.want {
			t.Errorf("QuotaFor(%v, %v, %d, %d) = %g, want %g", c.client, c.server, c.clientCPUs, c.serverCPUs, got, c.want)
		}
	}
}

func TestLowerQuota(t *testing.T) {
	for _, c := range []struct{ cores, want float64 }{
		{0.5, 0.35}, // 0.35: a search that met the client's limit at half a CPU
		{1, 0.7},    // no quota: from the server's one CPU
		{0.2, 0.1},  // 0.14 → 0.1
		{0.14, 0.1}, // never below the floor
		{0.1, 0},    // at the floor: nothing lower
		{0.05, 0},
		{2, 1.4},
	} {
		if got := LowerQuota(c.cores); got != c.want {
			t.Errorf("LowerQuota(%g) = %g, want %g", c.cores, got, c.want)
		}
	}
}
