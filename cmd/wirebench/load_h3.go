package main

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/wirebench/wirebench/load"
)

// noteH3Handshakes records an HTTP/3 run's QUIC handshakes in the result's
// configuration ("h3_handshakes_ns": the result model has no place for
// connection set-up yet) and prints them under the summary: they happen
// before the run (load/h3.Pool.Warm), apart from the requests' latency.
func noteH3Handshakes(w io.Writer, sc load.Scenario, cfg map[string]any) {
	r, ok := sc.(interface{ H3Handshakes() []time.Duration }) // load.Raw, the reference scenarios
	if !ok {
		return
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
