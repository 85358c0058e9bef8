package report

import (
	"fmt"

	"github.com/wirebench/wirebench/results/stats"
)

// A study cut short by a signal leaves cells with fewer trials than
// planned. Their comparisons are never decided, whatever the test says of
// the trials that ran: the missing trials might have changed the answer.
// VsBaseline marks such a comparison once (cutDelta), and every renderer
// goes through judge or FormatDelta, which then say "not decided" ("?").

// compare tests cell i's values against the baseline's (cell 0's): every
// comparison with the baseline goes through here, so that one of an
// incomplete cell is marked undecidable in every table.
func (g Group) compare(i int, old, new []float64) stats.Delta {
	d := stats.Compare(old, new)
	if g.Cells[0].Incomplete || g.Cells[i].Incomplete {
		d = cutDelta(d)
	}
	return d
}

// cutVerdict groups interrupted comparisons in the summary answer, apart
// from those with too few trials by design.
const cutVerdict Verdict = -1

// cutWarning marks a Delta of an interrupted comparison.
const cutWarning = "the study was interrupted before these cells ran all their trials"

// cutDelta makes d undecidable: at α = 0 no p-value is significant and no
// trial count can decide (stats.Delta.Decidable is false).
func cutDelta(d stats.Delta) stats.Delta {
	d.Alpha = 0
	d.Warnings = append(d.Warnings, cutWarning)
	return d
}

// isCut reports whether d compares a cell of an interrupted study that
// missed some of its trials.
func isCut(d stats.Delta) bool { return d.Alpha == 0 }

// cannotDecide is why d decides nothing: too few trials for the test
// ("cannot decide with 2 trials (need 4+)", per adding " per cell"), or a
// study interrupted before the cells ran all theirs.
func cannotDecide(d stats.Delta, verb, per string) string {
	if isCut(d) {
		return fmt.Sprintf("not decided, the study was interrupted with %s run", trialCount(d))
	}
	return fmt.Sprintf("%s with %s (need %d+%s)", verb, trialCount(d), stats.MinUTestSamples(d.Alpha), per)
}
