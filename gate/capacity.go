package gate

import "github.com/wirebench/wirebench/results"

// capacity reads a trial's capacity at the study's SLO. The result model
// does not carry a per-trial capacity yet (issue 36 adds measure:
// capacity); until it does, no trial has one and the gate skips the
// metric, saying so.
func capacity(results.Trial) (float64, bool) { return 0, false }
