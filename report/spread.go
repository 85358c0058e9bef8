package report

import "github.com/wirebench/wirebench/results/stats"

// The formatters below are for tables a study writes itself (study kv's
// seed tables, in results.Study.Notes): the same notation as every report
// table, from the same code, so that no number there loses its spread.

// FormatSpread prints a median over trials with its spread, as the
// report's tables do: "12.35k ± 3.1%" with enough trials for a confidence
// interval, else the lowest and highest trial, "12.35k [11.9–12.8k]".
func FormatSpread(u Unit, s stats.Summary) string { return formatSummary(u, s) }

// FormatRatio prints new's median over old's with the range the ratio may
// lie in given both spreads, as the report's answer does: "0.87× [0.80…0.95]".
func FormatRatio(d stats.Delta) string {
	if d.Old.Center == 0 {
		return "—"
	}
	return ratioOf(d.New.Center/d.Old.Center) + "×" + ratioRange(d)
}

// SpreadNote explains FormatSpread's two notations in one sentence.
func SpreadNote() string { return spreadNote() }
