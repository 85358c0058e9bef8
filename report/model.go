// Package report renders wirebench results for people: Markdown and CSV
// tables in the seeds' style, a self-contained HTML page with plots, and
// benchstat-style A/B comparisons. The model it renders lives in package
// results and the statistics in results/stats; the names below keep
// older callers compiling.
package report

import (
	"io"

	"github.com/wirebench/wirebench/results"
	"github.com/wirebench/wirebench/results/stats"
)

// Aliases of the results model (package results) and its statistics.
type (
	Results     = results.Study
	Cell        = results.Cell
	Trial       = results.Trial
	ServerStats = results.ServerStats
	ProcSample  = results.ProcSample
	Payload     = results.Payload
	CheckResult = results.CheckResult
	Summary     = stats.Summary
	Delta       = stats.Delta
)

// Schema names the study result format.
const Schema = results.StudySchema

// Confidence and Alpha are the levels of every interval and comparison.
const (
	Confidence = stats.Confidence
	Alpha      = stats.Alpha
)

// ErrResults marks a result file that cannot be read.
var ErrResults = results.ErrResults

// Read reads a study or a load result file (see results.Read).
func Read(rd io.Reader) (*Results, error) { return results.Read(rd) }

// Summarize and Compare are results/stats'.
var (
	Summarize = stats.Summarize
	Compare   = stats.Compare
)
