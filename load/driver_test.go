package load

import (
	"context"
	"testing"
	"time"

	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// driverScenario is a Scenario that names a driver and nothing else.
type driverScenario Driver

func (d driverScenario) Name() string                                           { return "driver" }
func (d driverScenario) Ops() []string                                          { return []string{"op"} }
func (d driverScenario) NewVU(context.Context, int, *measure.Bytes) (VU, error) { return nil, nil }
func (d driverScenario) Driver() Driver                                         { return Driver(d) }
func (d driverScenario) Finish(*results.Load)                                   {}

// TestPickDriver: the scenario's driver runs only where the options allow
// it; everything else runs per VU.
func TestPickDriver(t *testing.T) {
	t.Parallel()
	closed := results.Options{Concurrency: 4}
	open := results.Options{Concurrency: 4, Rate: 100}
	ramp := results.Options{Stages: []results.Stage{{Duration: time.Second, Target: 4}}}
	loop := closed
	loop.EventLoop = true
	loopOpen := open
	loopOpen.EventLoop = true
	loopRamp := ramp
	loopRamp.EventLoop = true
	for _, tc := range []struct {
		sc   Driver
		o    results.Options
		want Driver
	}{
		{PerVU, loop, PerVU},
		{EventLoops, loop, EventLoops},
		{EventLoops, closed, PerVU}, // no --engine loop
		{EventLoops, loopOpen, PerVU},
		{EventLoops, loopRamp, PerVU},
		{Batches, closed, Batches},
		{Batches, ramp, Batches},
		{Batches, open, PerVU},
		{Batches, loop, Batches},
	} {
		o := Options{Options: tc.o}
		if got := pickDriver(&o, driverScenario(tc.sc)); got != tc.want {
			t.Errorf("scenario %v, options %+v: %v, want %v", tc.sc, tc.o, got, tc.want)
		}
	}
}
