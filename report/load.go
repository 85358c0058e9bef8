package report

import (
	"fmt"
	"io"

	"github.com/wirebench/wirebench/results"
)

// LoadText is what a load run's summary shows beside the result itself.
type LoadText struct {
	// Replay, if set, is what a replay sent of its recording
	// (spec.Made.Replayed); Record what a request log kept, one line.
	Replay *results.ReplayRun
	Record string
	// Percentiles, if any, add the latency distribution at them.
	Percentiles []float64
}

// WriteLoad writes a load run's text summary, as wirebench load prints
// it: the headline table, then each section the run has (the link, the
// connection set-up, streams, KV, bytes by layer, the slowest requests,
// a replay's record), then the distribution asked for.
func WriteLoad(w io.Writer, res *results.Load, t LoadText) error {
	if err := results.WriteSummary(w, res); err != nil {
		return err
	}
	results.WriteLinkSummary(w, res.Link)
	WriteConn(w, res.Conn)
	for _, f := range []func(io.Writer, *results.Load) error{results.WriteStreamSummary, results.WriteKVSummary, results.WriteLayerSummary} {
		if err := f(w, res); err != nil {
			return err
		}
	}
	if line := results.SlowestLine(res.Exemplars); line != "" {
		fmt.Fprintf(w, "\n  %s\n", line)
	}
	if t.Record != "" {
		fmt.Fprintf(w, "\n  record        %s\n", t.Record)
	}
	if t.Replay != nil {
		WriteReplay(w, res, *t.Replay)
	}
	if len(t.Percentiles) > 0 {
		return results.WriteDistribution(w, res, t.Percentiles)
	}
	return nil
}
