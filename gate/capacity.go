package gate

import "github.com/wirebench/wirebench/results"

// capacity reads a trial's capacity at the study's SLO (measure:
// capacity): the rate its search answered, or 0 when no rate met the SLO.
// A search that ended on a lower bound (the client was the limit, every
// rate up to the maximum passed) or ran out of time has no figure to
// gate on, and neither has a trial that measured throughput: the gate
// skips them.
func capacity(t results.Trial) (float64, bool) {
	c := t.Capacity
	if c == nil {
		return 0, false
	}
	switch c.Limit {
	case results.LimitSLO, results.LimitMinRate:
		m, _ := results.MetricByKey("capacity")
		return m.Value(t)
	}
	return 0, false
}
