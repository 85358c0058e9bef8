package load

import (
	"testing"
	"time"

	"github.com/wirebench/wirebench/results"
)

// TestScheduleEnds: a stage's last arrival is the one before its end, so a
// ramp of 10 req/s for 1 s has exactly 10 requests (0 ms .. 900 ms); at the
// very end of the last stage the schedule stops, and the interpolated
// target says done.
func TestScheduleEnds(t *testing.T) {
	p := RampPacer{Start: 10, Stages: []results.Stage{{Duration: time.Second, Target: 10}}}
	if at, stop := p.Due(9); stop || at != 900*time.Millisecond {
		t.Errorf("Due(9) = %v, %v; want 900ms", at, stop)
	}
	if at, stop := p.Due(10); !stop {
		t.Errorf("Due(10) = %v: a 1 s stage at 10 req/s has 10 requests", at)
	}
	if v, done := stageValue(0, []results.Stage{{Duration: time.Second, Target: 10}}, time.Second); !done || v != 10 {
		t.Errorf("stageValue at the end = %v, %v; want 10, done", v, done)
	}
	if v, done := stageValue(0, []results.Stage{{Duration: time.Second, Target: 10}, {Duration: time.Second, Target: 30}}, 1500*time.Millisecond); done || v != 20 {
		t.Errorf("stageValue mid second stage = %v, %v; want 20", v, done)
	}
}

// TestZeroLengthStageIsAStep: "0s:50" is a jump to 50, allowed by the
// parser, and the open-loop schedule then runs at 50 req/s at once.
func TestZeroLengthStageIsAStep(t *testing.T) {
	st, err := ParseStages("0s:50,1s:50")
	if err != nil {
		t.Fatal(err)
	}
	p := RampPacer{Start: 0, Stages: st}
	if at, stop := p.Due(5); stop || at != 100*time.Millisecond {
		t.Errorf("Due(5) = %v, %v; want 100ms (50 req/s from the start)", at, stop)
	}
	if _, err := ParseStages("1s:0"); err != nil {
		t.Errorf("a stage to 0 is a ramp down, not an error: %v", err)
	}
}

// TestStagesSizeTheRun: with stages, the run lasts their sum and a
// closed-loop run gets as many VUs as the largest target.
func TestStagesSizeTheRun(t *testing.T) {
	o, err := Options{Options: results.Options{StartTarget: 2, Stages: []results.Stage{{Duration: time.Second, Target: 5}, {Duration: 2 * time.Second, Target: 20}, {Duration: time.Second, Target: 3}}}}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if o.Duration != 4*time.Second || o.Concurrency != 20 {
		t.Errorf("duration %v, concurrency %d; want 4s, 20", o.Duration, o.Concurrency)
	}
}
