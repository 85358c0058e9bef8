// Package stats is the statistics of wirebench results, apart from the
// model (package results) and the rendering (package report), as
// benchstat splits benchfmt, benchmath and its tables: medians with
// distribution-free confidence intervals, the Mann-Whitney U test, and
// deltas that know when too few trials were run to decide anything.
package stats
