package load

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/wirebench/wirebench/results"
)

// ParseStages reads "30s:50,1m:50,30s:100".
func ParseStages(s string) ([]results.Stage, error) {
	var out []results.Stage
	for _, part := range strings.Split(s, ",") {
		d, t, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok {
			return nil, fmt.Errorf("%w: stage %q is not duration:target", ErrOptions, part)
		}
		dur, err := ParseDuration(d)
		if err != nil {
			return nil, fmt.Errorf("%w: stage %q: bad duration", ErrOptions, part)
		}
		tgt, err := strconv.ParseFloat(t, 64)
		if err != nil || tgt < 0 || math.IsInf(tgt, 0) || math.IsNaN(tgt) {
			return nil, fmt.Errorf("%w: stage %q: bad target", ErrOptions, part)
		}
		out = append(out, results.Stage{Duration: dur, Target: tgt})
	}
	return out, nil
}

// stagesDuration is the total length of the ramp.
func stagesDuration(st []results.Stage) time.Duration {
	var d time.Duration
	for _, s := range st {
		d += s.Duration
	}
	return d
}

// stagesMax is the largest target, which sizes the worker pool.
func stagesMax(start float64, st []results.Stage) float64 {
	m := start
	for _, s := range st {
		m = math.Max(m, s.Target)
	}
	return m
}

// stageValue is the interpolated target at elapsed; done is true past
// the last stage.
func stageValue(start float64, st []results.Stage, elapsed time.Duration) (v float64, done bool) {
	prev := start
	for _, s := range st {
		if elapsed < s.Duration {
			f := float64(elapsed) / float64(s.Duration)
			return prev + (s.Target-prev)*f, false
		}
		elapsed -= s.Duration
		prev = s.Target
	}
	return prev, true
}
