package h3

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/quic-go/quic-go/http3"
	"github.com/quic-go/quic-go/qlogwriter"
)

// BenchmarkClient is one VU's request loop (GET, read the body, close)
// through a Pool's client (per-request timeout, counted socket, bytes by
// layer) and through a bare quic-go http3.Transport, against the same
// server in the process: the difference per request is the Pool's.
//
// Three more show where a Pool's cost was and is: its connection behind
// an http.Client with Timeout set (as Pool.Client was: net/http then runs
// a goroutine and a timer per request), a Pool whose split counts
// quic-go's packet events too (CheckLayers: quic-go builds an event per
// packet and per ACK, as every Pool did before), and a Pool without the
// layer trace (quic-go builds its qlog events only for a trace).
//
//	go test -run - -bench Client -benchmem ./load/h3
func BenchmarkClient(b *testing.B) {
	s := startServer(b, 100)
	url := "https://" + s.addr + "/?n=105"
	loop := func(b *testing.B, c *http.Client) {
		ctx := context.Background()
		for b.Loop() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			resp, err := c.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			n, err := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err != nil || n != 105 || resp.StatusCode != 200 {
				b.Fatalf("status %d, %d bytes, %v", resp.StatusCode, n, err)
			}
		}
	}
	b.Run("bare", func(b *testing.B) {
		tr := &http3.Transport{TLSClientConfig: &tls.Config{RootCAs: s.roots}, DisableCompression: true}
		defer tr.Close()
		loop(b, &http.Client{Transport: tr})
	})
	b.Run("pool", func(b *testing.B) {
		p := NewPool(1, s.addr, 10*time.Second, &tls.Config{RootCAs: s.roots})
		defer p.Close()
		loop(b, p.Client(0))
	})
	b.Run("pool-http.Client.Timeout", func(b *testing.B) {
		p := NewPool(1, s.addr, 10*time.Second, &tls.Config{RootCAs: s.roots})
		defer p.Close()
		loop(b, &http.Client{Timeout: 10 * time.Second, Transport: p.slots[0]})
	})
	b.Run("pool-checked", func(b *testing.B) {
		p := NewPool(1, s.addr, 10*time.Second, &tls.Config{RootCAs: s.roots})
		p.CheckLayers()
		defer p.Close()
		loop(b, p.Client(0))
	})
	b.Run("pool-no-trace", func(b *testing.B) {
		p := NewPool(1, s.addr, 10*time.Second, &tls.Config{RootCAs: s.roots})
		p.wrapTrace = func(qlogwriter.Trace) qlogwriter.Trace { return nil }
		defer p.Close()
		loop(b, p.Client(0))
	})
}
