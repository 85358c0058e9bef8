package main

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/wirebench/wirebench/load"
)

// noteTransport says, under the summary, which transport --transport auto
// took and why, then the QUIC handshakes of an HTTP/3 run.
func noteTransport(w io.Writer, sc load.Scenario, cfg map[string]any) {
	if r, ok := sc.(*load.Raw); ok && r.Options().Auto != "" {
		fmt.Fprintf(w, "  transport %s (--transport auto: %s)\n", r.Options().Transport, r.Options().Auto)
	}
	if note, ok := cfg["auto"].(string); ok {
		fmt.Fprintf(w, "  transport h3 (--transport auto: %s)\n", note)
	}
	noteH3Handshakes(w, sc, cfg)
}

// autoScenario resolves --transport auto for a reference scenario: the
// first request over TLS on TCP, then HTTP/3 at the address its Alt-Svc
// advertises (the scenarios speak https:// only over h3); the reason goes
// into the result's configuration ("auto") and the summary.
func (f *loadFlags) autoScenario() (note string, err error) {
	addr, note, err := load.FollowAltSvc(f.sc.URL, f.sc.Insecure, f.sc.CAFile, f.o.Timeout)
	if err != nil {
		return "", err
	}
	f.sc.URL, f.sc.Transport = "https://"+addr, load.TransportH3
	return note, nil
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
	hs := r.H3Handshakes()
	if len(hs) == 0 {
		return
	}
	cfg["h3_handshakes_ns"] = hs
	s := slices.Sorted(slices.Values(hs))
	fmt.Fprintf(w, "  QUIC handshakes %d: median %v, max %v (not in the latencies above)\n",
		len(s), s[(len(s)-1)/2].Round(time.Microsecond), s[len(s)-1].Round(time.Microsecond))
}
