package replay

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/wirebench/wirebench/capacity"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/results"
)

// TestSearchSpeeds: with no rates given, the search starts at the
// recording's own rate (speed 1), stays within the speeds asked and
// answers in speed; a speed range that cannot be searched is
// capacity.ErrOptions before any step.
func TestSearchSpeeds(t *testing.T) {
	o := Options{File: recording(t), Options: conn.Options{URL: slowServer(t, 0)}}
	rec, err := Prepare(o)
	if err != nil {
		t.Fatal(err)
	}
	slo, err := results.ParseThreshold("p99<5s")
	if err != nil {
		t.Fatal(err)
	}
	var base load.Options
	base.Timeout = 5 * time.Second
	s := SpeedSearch{Replay: o, Base: base, MaxSpeed: 2, Capacity: capacity.Options{SLO: []results.Threshold{slo},
		StepDuration: 60 * time.Millisecond, Warmup: 10 * time.Millisecond, ConfirmDuration: -1, Concurrency: 16}}
	res, err := Search(context.Background(), rec, s)
	if err != nil {
		t.Fatal(err)
	}
	if res.Scenario != "replay" || res.Config.Speed == nil || res.Config.Recording == nil || res.Config.Recording.Rate != rec.Rate() || len(res.Steps) == 0 {
		t.Fatalf("result: scenario %q, config %+v, %d steps", res.Scenario, res.Config, len(res.Steps))
	}
	if first := res.Steps[0].Offered; first != rec.Rate() {
		t.Errorf("first step at %g/s, want the recording's own %g/s (speed 1)", first, rec.Rate())
	}
	for _, st := range res.Steps {
		if st.Offered > 2*rec.Rate()+1e-9 {
			t.Errorf("a step at %g/s: above --max-speed 2 (%g/s)", st.Offered, 2*rec.Rate())
		}
	}
	if a := res.Config.Speed.Answer; a != res.Rate/rec.Rate() || a > 2 {
		t.Errorf("answer in speed %g, rate %g/s: want rate/%g, at most 2", a, res.Rate, rec.Rate())
	}
	s.MinSpeed, s.MaxSpeed = 3, 2
	if _, err := Search(context.Background(), rec, s); !errors.Is(err, capacity.ErrOptions) {
		t.Errorf("min speed 3, max 2: %v, want capacity.ErrOptions", err)
	}
}
