package report

import (
	"slices"

	"github.com/wirebench/wirebench/results"
)

// Metric, Unit and Metrics are results' one catalogue of metrics: the
// same names, units, directions and formatting in reports, gates and
// exports.
type (
	Metric = results.Metric
	Unit   = results.Unit
)

// Units of the metrics.
const (
	UnitRate     = results.UnitRate
	UnitDuration = results.UnitDuration
	UnitBytes    = results.UnitBytes
	UnitCount    = results.UnitCount
)

// Metrics are the per-trial metrics of every report, in column order.
var Metrics = results.Metrics

// MetricByKey returns the metric with the given key, from Metrics (which
// a test may replace).
func MetricByKey(key string) (Metric, bool) {
	i := slices.IndexFunc(Metrics, func(m Metric) bool { return m.Key == key })
	if i < 0 {
		return Metric{}, false
	}
	return Metrics[i], true
}
