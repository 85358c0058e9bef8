package report

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/wirebench/wirebench/results"
)

// WriteConn says, under a load summary, which transport --transport auto
// took and why, then the QUIC handshakes of an HTTP/3 run: what the
// scenario recorded in the result (results.Conn).
func WriteConn(w io.Writer, c *results.Conn) {
	if c == nil {
		return
	}
	if c.Auto != "" {
		fmt.Fprintf(w, "  transport %s (--transport auto: %s)\n", c.Transport, c.Auto)
	}
	if len(c.Handshakes) > 0 { // before the run (load/h3.Pool.Warm), apart from the latencies
		s := slices.Sorted(slices.Values(c.Handshakes))
		fmt.Fprintf(w, "  QUIC handshakes %d: median %v, max %v (not in the latencies above)\n",
			len(s), s[(len(s)-1)/2].Round(time.Microsecond), s[len(s)-1].Round(time.Microsecond))
	}
	writeZeroRTT(w, c.ZeroRTT)
}

// writeZeroRTT prints what --0rtt did: the full and resumed handshakes
// apart, and how many connections the server let use 0-RTT.
func writeZeroRTT(w io.Writer, z *results.ZeroRTT) {
	if z == nil {
		return
	}
	if z.NoTicket != "" {
		fmt.Fprintf(w, "  0-RTT: no session ticket (%s): every connection made a full handshake\n", z.NoTicket)
	}
	fmt.Fprintf(w, "  0-RTT: %d of %d resumed connections used it (%d requests sent early)", z.Used, len(z.Resumed), z.EarlyRequests)
	if z.Refused > 0 {
		fmt.Fprintf(w, "; the server rejected the early data of %d, their requests went again on connections dialed in 1-RTT", z.Refused)
	}
	if z.NoEarly > 0 {
		fmt.Fprintf(w, "; %d could not: the server's ticket allows no early data (serve --h3-0rtt to allow it), they waited for the handshake", z.NoEarly)
	}
	fmt.Fprintln(w, "\n  (each connection dialed at its first request: that request's latency includes its resumed handshake)")
	for _, h := range []struct {
		name string
		d    []time.Duration
	}{{"full", z.Full}, {"resumed", z.Resumed}} {
		if len(h.d) > 0 {
			s := slices.Sorted(slices.Values(h.d))
			fmt.Fprintf(w, "  QUIC handshakes %s %d: median %v, max %v\n", h.name, len(s),
				s[(len(s)-1)/2].Round(time.Microsecond), s[len(s)-1].Round(time.Microsecond))
		}
	}
}
