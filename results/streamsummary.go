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
	writeLayers(tw, "bytes per exchange", s.In, s.Out, s.Exchanges)
	return tw.Flush()
}

// WriteLayerSummary prints the bytes per request by layer of a run that
// has them outside a stream section (HTTP/3). It prints nothing otherwise.
func WriteLayerSummary(w io.Writer, r *Load) error {
	if r.Layers == nil || r.Stream != nil {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw)
	writeLayers(tw, "bytes per request by layer", r.Layers.In, r.Layers.Out, r.Requests)
	return tw.Flush()
}

func writeLayers(tw io.Writer, title string, in, out Layers, per int64) {
	n := float64(max(per, 1))
	fmt.Fprintf(tw, "  %s\treceived\tsent\n", title)
	for _, l := range []struct {
		name    string
		in, out int64
	}{
		{"message", in.Message, out.Message}, {"envelope (prefix, NDJSON/SSE framing)", in.Envelope, out.Envelope},
		{"HTTP/2 frames", in.H2Frames, out.H2Frames}, {"HTTP/2 headers (HPACK)", in.H2Headers, out.H2Headers},
		{"WebSocket frames", in.WS, out.WS}, {"HTTP/1.1 heads", in.H1Headers, out.H1Headers},
		{"HTTP/1.1 chunking", in.H1Framing, out.H1Framing},
		{"QUIC (packet headers, AEAD tags, ACK, CRYPTO, other frames)", in.QUIC, out.QUIC},
		{"HTTP/3 frames", in.H3Frames, out.H3Frames}, {"HTTP/3 headers (QPACK)", in.QPACK, out.QPACK},
		{"unparsed", in.Other, out.Other},
	} {
		if l.in != 0 || l.out != 0 {
			fmt.Fprintf(tw, "    %s\t%.1f\t%.1f\n", l.name, float64(l.in)/n, float64(l.out)/n)
		}
	}
	fmt.Fprintf(tw, "    total\t%.1f\t%.1f\n", float64(in.Total())/n, float64(out.Total())/n)
}
