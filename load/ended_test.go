package load

import (
	"context"
	"testing"
	"time"

	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// deadlineScenario's VUs answer as a client whose socket deadline is the
// call's: each call lasts until the run's hard end (-d plus the graceful
// stop) and fails at that deadline by the clock, whether or not the
// run's context timer has fired yet.
type deadlineScenario struct{}

func (deadlineScenario) Name() string             { return "deadline" }
func (deadlineScenario) Ops() []string            { return []string{"op"} }
func (deadlineScenario) Driver() Driver           { return PerVU }
func (deadlineScenario) Finish(res *results.Load) {}
func (deadlineScenario) NewVU(context.Context, int, *measure.Bytes) (VU, error) {
	return deadlineVU{}, nil
}

type deadlineVU struct{}

func (deadlineVU) Close() error { return nil }
func (deadlineVU) Do(ctx context.Context, o *Outcome) {
	d, ok := ctx.Deadline()
	if !ok {
		return
	}
	for time.Now().Before(d) { // no wait on ctx.Done: the peer's clock ends the call
	}
	o.Fail = "timeout"
}

// TestCutByTheEndByTheClock: a call that fails at the run's hard end is
// interrupted, not a failure of the server, even when the run's context
// timer has not fired yet (CI on a busy machine counted one gRPC call cut
// by the end of a study trial as a "timeout" failure).
func TestCutByTheEndByTheClock(t *testing.T) {
	t.Parallel()
	for i := range 3 {
		// Each VU's one call lasts until the hard end: none may count as
		// failed, both as interrupted, however late the timer fires.
		res, err := Run(context.Background(), Options{Options: results.Options{Concurrency: 2, Duration: 30 * time.Millisecond, GracefulStop: 2 * time.Millisecond}}, deadlineScenario{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Failed != 0 || res.Interrupted != 2 {
			t.Fatalf("run %d: %d requests, %d failed %v, %d interrupted; want none failed, both calls interrupted",
				i, res.Requests, res.Failed, res.Failures, res.Interrupted)
		}
	}
}
