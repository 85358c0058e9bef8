package h3_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/load/h3"
	"github.com/wirebench/wirebench/server"
)

// --0rtt against our own server, with serve --h3-0rtt and without: the
// client's counts of resumed and 0-RTT connections and of requests equal
// the server's own counters (it counts a connection when its handshake
// completes, so the test waits for the counts to settle, up to 10 s).
// Without --h3-0rtt, no connection uses 0-RTT and every request is
// still answered once.
func TestZeroRTTAgainstServe(t *testing.T) {
	for _, allow := range []bool{true, false} {
		t.Run("h3-0rtt="+strconv.FormatBool(allow), func(t *testing.T) {
			srv, err := server.Start(context.Background(), server.Options{HTTPAddr: "127.0.0.1:0", NoGRPC: true,
				H3: server.H3{Addr: "127.0.0.1:0", Allow0RTT: allow}, SeedUsers: 3})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			roots := x509.NewCertPool()
			roots.AppendCertsFromPEM(srv.Cert().PEM)
			const conns, n = 3, 30
			p := h3.NewPool(conns, srv.H3Addr(), 10*time.Second, &tls.Config{RootCAs: roots})
			p.Enable0RTT()
			p.Warm(context.Background())
			for i := range n {
				resp, err := p.Client(i).Get("https://" + srv.H3Addr() + "/users/1")
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Fatalf("status %d", resp.StatusCode)
				}
			}
			p.Close()
			z := p.ZeroRTT()
			want := map[string]int64{
				"wirebench_h3_requests_total":            n,
				"wirebench_h3_connections_total":         int64(len(z.Full) + len(z.Resumed)),
				"wirebench_h3_resumed_connections_total": int64(len(z.Resumed)),
				"wirebench_h3_0rtt_connections_total":    z.Used,
			}
			got := map[string]int64{}
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				for k := range want {
					got[k] = testkit.Metric(t, srv.HTTPAddr(), k)
				}
				if equal(got, want) || time.Now().After(deadline) {
					break
				}
			}
			if !equal(got, want) {
				t.Errorf("server %v, client %v (%+v)", got, want, z)
			}
			wantUsed := int64(0)
			if allow {
				wantUsed = conns
			}
			if len(z.Full) != 1 || len(z.Resumed) != conns || z.Used != wantUsed || (!allow && z.NoEarly != conns) {
				t.Errorf("client %+v: want 1 full handshake, %d resumed, %d with 0-RTT", z, conns, wantUsed)
			}
		})
	}
}

func equal(a, b map[string]int64) bool {
	for k, v := range b {
		if a[k] != v {
			return false
		}
	}
	return true
}
