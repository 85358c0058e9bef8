package load

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/quic-go/quic-go/http3"

	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/results"
)

// BenchmarkRawH3 is one VU's requests over HTTP/3 against quic-go's server
// in the process: bench/h3bare's request loop on a bare http3.Transport
// (a request built per call, the body read to its end), raw mode's VU
// (its request, timeout and checks: what `load --transport h3` sends per
// request) and the whole engine around it (Run, one VU, -n b.N: the clock
// reads and statistics besides). Their difference per request, and in
// allocations, is ours; the server's share is the same in each.
//
//	go test -run - -bench RawH3 -benchmem ./load
func BenchmarkRawH3(b *testing.B) {
	srv, _ := startH3Server(b)
	url := "https://" + srv.addr + "/users/1"
	b.Run("bare", func(b *testing.B) {
		tr := &http3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableCompression: true}
		defer tr.Close()
		c := &http.Client{Transport: tr}
		ctx := context.Background()
		for b.Loop() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			resp, err := c.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK {
				b.Fatal(resp.StatusCode, err)
			}
		}
	})
	ro := RawOptions{Options: conn.Options{URL: url, Transport: conn.H3, Insecure: true, Connections: 1, NoLayers: true, Timeout: 10 * time.Second}}
	b.Run("vu", func(b *testing.B) {
		r, err := NewRaw(ro)
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		vu, err := r.NewVU(ctx, 0, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer r.h3.Close()
		var o Outcome
		for b.Loop() {
			o.reset()
			vu.Do(ctx, &o)
			if o.Fail != "" {
				b.Fatal(o.Fail)
			}
		}
	})
	b.Run("run", func(b *testing.B) {
		r, err := NewRaw(ro)
		if err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		res, err := Run(context.Background(), Options{Options: results.Options{Concurrency: 1, Requests: int64(b.N), Timeout: 10 * time.Second}}, r)
		if err != nil || res.Failed != 0 {
			b.Fatal(err, res.Failures)
		}
	})
}
