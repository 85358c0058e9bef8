package results

import (
	"fmt"
	"io"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/wirebench/wirebench/measure"
)

// WriteHdrLog writes a run's latency histogram in the HdrHistogram log
// format (version 1.3, as Java's HistogramLogWriter and wrk2 write it), so
// HistogramLogProcessor, HdrHistogram's plotter and other tools read it:
//
//	#[Histogram log format version 1.3]
//	#[StartTime: 1773500966 (seconds since epoch), 2026-03-14T15:09:26Z]
//	#[BaseTime: 1773500966 (seconds since epoch)]
//	"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"
//	0.000000,2.000000,100.139007,HISTFAAAA…
//
// One interval covers the whole run. Values are in nanoseconds, the
// format's convention (its tools divide by 1e6 to print milliseconds, and
// Interval_Max is in milliseconds), though we record microseconds: each
// bucket is carried over at the same 3 significant digits.
func WriteHdrLog(w io.Writer, res *Load) error {
	h, err := nanoHistogram(res.Latency)
	if err != nil {
		return err
	}
	startMs, endMs := res.Start.UnixMilli(), res.End.UnixMilli()
	h.SetStartTimeMs(startMs)
	h.SetEndTimeMs(endMs)
	lw := hdrhistogram.NewHistogramLogWriter(w)
	lw.SetBaseTime(startMs)
	for _, step := range []func() error{
		lw.OutputLogFormatVersion,
		func() error {
			return lw.OutputComment(fmt.Sprintf("[wirebench load: %s, latency in nanoseconds]", res.Scenario))
		},
		func() error { return lw.OutputStartTime(startMs) },
		func() error { return lw.OutputBaseTime(startMs) },
		lw.OutputLegend,
		func() error { return lw.OutputIntervalHistogram(h) },
	} {
		if err := step(); err != nil {
			return fmt.Errorf("results: write HdrHistogram log: %w", err)
		}
	}
	return nil
}

// ReadHdrLog reads the first interval of an HdrHistogram log, in the
// log's units (nanoseconds for what WriteHdrLog wrote).
func ReadHdrLog(r io.Reader) (*hdrhistogram.Histogram, error) {
	h, err := hdrhistogram.NewHistogramLogReader(r).NextIntervalHistogram()
	if err != nil {
		return nil, fmt.Errorf("%w: HdrHistogram log: %v", ErrResults, err)
	}
	if h == nil {
		return nil, fmt.Errorf("%w: HdrHistogram log has no interval", ErrResults)
	}
	return h, nil
}

// nanoHistogram copies a microsecond measure.Histogram into a nanosecond
// hdrhistogram. measure keeps its histogram private but encodes it
// whole (HdrHistogram's V2 encoding), so we decode that.
func nanoHistogram(m *measure.Histogram) (*hdrhistogram.Histogram, error) {
	if m == nil {
		m = measure.NewHistogram()
	}
	enc, err := m.Encode()
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	us, err := hdrhistogram.Decode(enc)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	perUs := int64(time.Microsecond)
	ns := hdrhistogram.New(perUs*us.LowestTrackableValue(), perUs*us.HighestTrackableValue(), int(us.SignificantFigures()))
	for _, b := range us.Distribution() {
		if b.Count == 0 {
			continue
		}
		// The bucket's highest equivalent value is what quantiles report.
		if err := ns.RecordValues(b.To*perUs, b.Count); err != nil {
			return nil, fmt.Errorf("results: %w", err)
		}
	}
	return ns, nil
}
