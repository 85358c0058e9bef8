package main

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/h3"
)

// noteTransport says, under the summary, which transport --transport auto
// took and why, then the QUIC handshakes of an HTTP/3 run.
func noteTransport(w io.Writer, sc load.Scenario, cfg map[string]any) {
	if tr, ok := sc.(transporter); ok {
		if transport, auto := tr.Transport(); auto != "" {
			fmt.Fprintf(w, "  transport %s (--transport auto: %s)\n", transport, auto)
		}
	}
	noteH3Handshakes(w, sc, cfg)
	noteZeroRTT(w, sc, cfg)
}

// noteZeroRTT prints and records what --0rtt did: the full and resumed
// handshakes apart, and how many connections the server let use 0-RTT.
func noteZeroRTT(w io.Writer, sc load.Scenario, cfg map[string]any) {
	r, ok := sc.(interface{ H3ZeroRTT() *h3.ZeroRTTStats }) // load.Raw, the reference scenarios
	if !ok || r.H3ZeroRTT() == nil {
		return
	}
	z := r.H3ZeroRTT()
	cfg["h3_0rtt"] = z
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

// transporter is a scenario that says which transport it runs over and,
// with --transport auto, which it took and why (load.Raw, the reference
// scenarios).
type transporter interface {
	Transport() (transport, auto string)
}

// noteH3Handshakes records an HTTP/3 run's QUIC handshakes in the result's
// configuration ("h3_handshakes_ns": the result model has no place for
// connection set-up yet) and prints them under the summary: they happen
// before the run (load/h3.Pool.Warm), apart from the requests' latency.
func noteH3Handshakes(w io.Writer, sc load.Scenario, cfg map[string]any) {
	r, ok := sc.(interface{ H3Handshakes() []time.Duration }) // load.Raw, the reference scenarios
	if !ok {
		return
	}
	if rr, ok := sc.(interface{ H3ZeroRTT() *h3.ZeroRTTStats }); ok && rr.H3ZeroRTT() != nil {
		return // noteZeroRTT: the resumed handshakes overlap the first requests
	}
	hs := r.H3Handshakes()
	if len(hs) == 0 {
		return
	}
	cfg["h3_handshakes_ns"] = hs
	s := slices.Sorted(slices.Values(hs))
	fmt.Fprintf(w, "  QUIC handshakes %d: median %v, max %v (not in the latencies above)\n",
		len(s), s[(len(s)-1)/2].Round(time.Microsecond), s[len(s)-1].Round(time.Microsecond))
}
