package server_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/wirebench/wirebench/server"
)

// dialQUIC opens a QUIC connection to the server's HTTP/3 port, trusting
// its certificate; the caller closes it.
func dialQUIC(t *testing.T, srv *server.Server, qc *quic.Config) (*quic.Conn, error) {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(srv.Cert().PEM)
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	return quic.DialAddr(ctx, srv.H3Addr(), &tls.Config{RootCAs: pool, NextProtos: []string{http3.NextProtoH3}}, qc)
}

// refused reports whether err is the server's CONNECTION_REFUSED.
func refused(err error) bool {
	var te *quic.TransportError
	return errors.As(err, &te) && te.Remote && te.ErrorCode == quic.ConnectionRefused
}

// TestH3ConnectionCap: 7,831 handshakes held 20,775 goroutines and 739 MB
// until the idle timeout. Past --h3-max-conns a handshake is refused at
// once (CONNECTION_REFUSED, not queued, not timed out), the refusals are
// counted, and a closed connection makes room for a new one.
func TestH3ConnectionCap(t *testing.T) {
	const maxConns, flood = 4, 40
	srv := startH3(t, server.Options{H3: server.H3{MaxConns: maxConns}})
	var (
		mu    sync.Mutex
		open  []*quic.Conn
		nRef  int
		other []error
		wg    sync.WaitGroup
	)
	for range flood {
		wg.Go(func() {
			c, err := dialQUIC(t, srv, nil)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				open = append(open, c)
			case refused(err):
				nRef++
			default:
				other = append(other, err)
			}
		})
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, c := range open {
			c.CloseWithError(0, "")
		}
	})
	if len(open) != maxConns || nRef != flood-maxConns || len(other) > 0 {
		t.Fatalf("%d handshakes at --h3-max-conns %d: %d open, %d refused, other errors %v", flood, maxConns, len(open), nRef, other)
	}
	if got := h3Metric(t, srv, "wirebench_h3_refused_initials_total"); got < flood-maxConns {
		t.Errorf("wirebench_h3_refused_initials_total %d, want at least one per refused client, %d", got, flood-maxConns)
	}
	if got := h3Metric(t, srv, "wirebench_h3_open_connections"); got != maxConns {
		t.Errorf("wirebench_h3_open_connections %d, want %d", got, maxConns)
	}
	// One closes: once the server has seen it, there is room for one more.
	open[0].CloseWithError(0, "bye")
	open = open[1:]
	deadline := time.Now().Add(hang)
	for h3Metric(t, srv, "wirebench_h3_open_connections") != maxConns-1 {
		if time.Now().After(deadline) {
			t.Fatal("a closed connection still counted as open")
		}
		time.Sleep(10 * time.Millisecond)
	}
	c, err := dialQUIC(t, srv, nil)
	if err != nil {
		t.Fatalf("a handshake with room under the cap: %v", err)
	}
	open = append(open, c)
	if _, err := dialQUIC(t, srv, nil); !refused(err) {
		t.Errorf("a handshake past the cap again: %v, want CONNECTION_REFUSED", err)
	}
}
