package results

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteStreamSummary prints what a stream or browser run adds to the
// summary: items, time to first and last item, per-message latency, and
// the bytes per exchange by layer. It prints nothing for other runs.
func WriteStreamSummary(w io.Writer, r *Load) error {
	s := r.Stream
	if s == nil {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\n%s:\t%d exchanges, %d items, %.0f items/s\n", s.Kind, s.Exchanges, s.Items, s.ItemsPerSecond(r.Measured()))
	if s.InBrowser {
		fmt.Fprintf(tw, "  latency measured in the page:\tp50 %v  p99 %v\n", s.Last.Quantile(0.5), s.Last.Quantile(0.99))
		return tw.Flush()
	}
	fmt.Fprintf(tw, "  first item:\tp50 %v  p99 %v\n", s.First.Quantile(0.5), s.First.Quantile(0.99))
	fmt.Fprintf(tw, "  last item:\tp50 %v  p99 %v\n", s.Last.Quantile(0.5), s.Last.Quantile(0.99))
	if s.PerMessage.Count() > 0 {
		fmt.Fprintf(tw, "  per message:\tp50 %v  p99 %v  (%d)\n", s.PerMessage.Quantile(0.5), s.PerMessage.Quantile(0.99), s.PerMessage.Count())
	}
	n := float64(max(s.Exchanges, 1))
	fmt.Fprintf(tw, "  bytes per exchange\treceived\tsent\n")
	for _, l := range []struct {
		name    string
		in, out int64
	}{
		{"message", s.In.Message, s.Out.Message}, {"envelope (prefix, NDJSON/SSE framing)", s.In.Envelope, s.Out.Envelope},
		{"HTTP/2 frames", s.In.H2Frames, s.Out.H2Frames}, {"HTTP/2 headers (HPACK)", s.In.H2Headers, s.Out.H2Headers},
		{"WebSocket frames", s.In.WS, s.Out.WS}, {"HTTP/1.1 heads", s.In.H1Headers, s.Out.H1Headers},
		{"HTTP/1.1 chunking", s.In.H1Framing, s.Out.H1Framing}, {"unparsed", s.In.Other, s.Out.Other},
	} {
		if l.in+l.out > 0 {
			fmt.Fprintf(tw, "    %s\t%.1f\t%.1f\n", l.name, float64(l.in)/n, float64(l.out)/n)
		}
	}
	fmt.Fprintf(tw, "    total\t%.1f\t%.1f\n", float64(s.In.Total())/n, float64(s.Out.Total())/n)
	return tw.Flush()
}
