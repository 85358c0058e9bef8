package load

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// TestRunLimits: options beyond the limits are ErrOptions before
// anything is allocated for them (-c 9223372036854775807 panicked in
// makeslice), for each option, including a ramp's largest target.
func TestRunLimits(t *testing.T) {
	t.Parallel()
	for _, o := range []results.Options{
		{Concurrency: math.MaxInt},
		{Concurrency: MaxConcurrency + 1},
		{Requests: math.MaxInt64},
		{Rate: MaxRate + 1},
		{Rate: math.Inf(1)},
		{Rate: math.NaN()},
		{Duration: MaxDuration + 1},
		{Timeout: MaxTimeout + 1},
		{GracefulStop: -1},
		{Stages: []results.Stage{{Duration: time.Second, Target: MaxConcurrency + 1}}}, // closed loop: VUs
		{Open: true, Stages: []results.Stage{{Duration: time.Second, Target: math.Inf(1)}}},
		{Stages: []results.Stage{{Duration: MaxDuration, Target: 1}, {Duration: time.Second, Target: 1}}},
	} {
		_, err := Run(context.Background(), Options{Options: o}, countingScenario{})
		if !errors.Is(err, ErrOptions) {
			t.Errorf("%+v: err %v, want ErrOptions", o, err)
		}
	}
}

// countingScenario cancels the run's context while its VUs start.
type countingScenario struct {
	started *int
	cancel  func()
}

func (countingScenario) Name() string             { return "counting" }
func (countingScenario) Ops() []string            { return []string{"op"} }
func (countingScenario) Driver() Driver           { return PerVU }
func (countingScenario) Finish(res *results.Load) {}
func (s countingScenario) NewVU(ctx context.Context, id int, _ *measure.Bytes) (VU, error) {
	*s.started++
	if id == 2 {
		s.cancel() // SIGTERM while the VUs start
	}
	return nopVU{}, nil
}

type nopVU struct{}

func (nopVU) Do(ctx context.Context, o *Outcome) {}
func (nopVU) Close() error                       { return nil }

// TestRunStopsDuringStartUp: a context cancelled while VUs start ends
// Run before the rest start (-c 100000000 ignored SIGTERM for 20 minutes
// while it built VUs).
func TestRunStopsDuringStartUp(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	_, err := Run(ctx, Options{Options: results.Options{Concurrency: 1000, Duration: time.Second}}, countingScenario{started: &n, cancel: cancel})
	if !errors.Is(err, context.Canceled) || n != 3 {
		t.Errorf("Run: err %v after %d VUs started, want context.Canceled after 3", err, n)
	}
}
