// Package gate is the regression verdict for CI: two cells of one
// interleaved study — a base build and a change — compared metric by
// metric against the tolerances the user allows, with a verdict a
// pipeline can act on:
//
//	Pass        every metric is within its tolerance, with confidence
//	Regression  some metric is worse than its tolerance, significantly at
//	            α after Holm's correction over the metrics
//	Undecidable neither: too few trials, or too much noise to rule out a
//	            regression of the tolerated size
//
// Each metric is compared on log values, so a change is a ratio
// (change/base) and noise that scales with the value stays one shape. The
// ratio is the Hodges-Lehmann estimate with its distribution-free
// interval (results/stats.ShiftCI); each end of the interval is a
// one-sided test at α, so "the interval lies beyond the tolerance" and
// "the test rejects" are the same statement.
//
// A regression must be shown (one-sided test that the change exceeds the
// tolerance, Holm-corrected over the metrics: the chance that an
// unchanged build, or one changed by no more than the tolerance, fails
// the gate is at most α). A pass must be shown too (every metric's
// interval below its tolerance: an intersection-union test, at level α
// without correction). Anything else is undecidable, never a pass.
//
// The package reads results (plain data) and imports no engine; the CLI
// (cmd/wirebench/gate.go) parses flags and maps the verdict to an exit
// code.
package gate
