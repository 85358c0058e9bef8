package server

import (
	"context"
	"net/netip"
	"testing"
	"time"
)

// HoldH3Lanes takes every lane of srv's HTTP/3 handshake gate, as
// handshakes of a source of its own would, so that the handshakes that
// come meanwhile queue; release frees them without a rest. grants
// receives the source of each handshake given a lane after that.
func HoldH3Lanes(t testing.TB, srv *Server) (release func(), grants <-chan netip.Prefix) {
	t.Helper()
	g := srv.tls.h3.gate
	if g == nil {
		t.Fatal("no handshake gate")
	}
	held := make([]*gateTicket, len(g.lanes))
	for i := range held {
		tk, err := g.enter(context.Background(), netip.MustParsePrefix("192.0.2.1/32"))
		if err != nil {
			t.Fatal(err)
		}
		g.mu.Lock()
		tk.limit.Stop() // held as long as the test wants
		g.mu.Unlock()
		held[i] = tk
	}
	ch := make(chan netip.Prefix, 4096)
	g.mu.Lock()
	g.onGrant = func(k netip.Prefix) {
		select {
		case ch <- k:
		default:
		}
	}
	g.mu.Unlock()
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		for _, tk := range held {
			tk.state = ticketDone
			g.lanes[tk.lane] = gateLane{}
		}
		g.dispatch(time.Now())
	}, ch
}

// H3RetryRate and H3RetryBurst are a silent source's bucket of Retries.
const H3RetryRate, H3RetryBurst = retryRate, retryBurst
