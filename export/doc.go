// Package export streams a run's results, as it goes, to Prometheus by
// remote write, with native histograms and exemplars that carry the
// requests' trace IDs, to OTLP/HTTP back ends, and to Prometheus's
// scrapes (Scrape). Remote write and OTLP requests are written with
// protowire, not the generated types (wire.go says why).
//
// It reads only results: the engine calls load.Options.Snapshot with the
// run so far (cumulative counts, HDR histograms, client CPU, exemplars)
// every interval; an Exporter queues the snapshot without blocking
// (a full queue drops it, counted: the next snapshot carries the same
// totals) and one goroutine converts and sends it to every Sink. The HDR
// histograms become exponential histograms of Schema 8 (native.go), so
// percentiles computed by Prometheus agree with the run's within one
// bucket (MaxQuantileError), and — since every segment uses the same
// buckets — histogram_quantile over the sum of all segments' series is
// the merged run's percentile. See docs/export.md.
package export
