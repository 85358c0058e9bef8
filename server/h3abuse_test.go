package server_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/wirebench/wirebench/httpapi"
	"github.com/wirebench/wirebench/internal/quicflood"
	"github.com/wirebench/wirebench/internal/testkit"
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
	srv := startH3(t, server.Options{H3: server.H3{MaxConns: maxConns, SourceConns: -1}})
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

// TestH3HandshakeRate: 40 handshakes at once against --h3-handshake-rate
// 2 (a burst of 100 ms' worth: one). With the socket filter, the Initials past the rate
// are dropped without a reply and counted, the clients resending them
// until a token comes or their 1-s handshake timeout ends: no
// CONNECTION_REFUSED, and no more admitted than the bucket gave. Without
// it (--h3-initial-filter=false), quic-go refuses each client.
func TestH3HandshakeRate(t *testing.T) {
	const rate, flood = 2, 40
	for _, filter := range []bool{true, false} {
		t.Run(fmt.Sprintf("filter=%v", filter), func(t *testing.T) {
			srv := startH3(t, server.Options{SeedUsers: 10, H3: server.H3{HandshakeRate: rate, HandshakeBurst: 100 * time.Millisecond, SourceRate: -1, NoInitialFilter: !filter}})
			var (
				mu                   sync.Mutex
				open, nRef, nTimeout int
				other                []error
				wg                   sync.WaitGroup
			)
			start := time.Now()
			for range flood {
				wg.Go(func() {
					qc := &quic.Config{HandshakeIdleTimeout: time.Second}
					if !filter {
						qc = nil // quic-go's queue of refusals drops some when full: those clients resend
					}
					c, err := dialQUIC(t, srv, qc)
					mu.Lock()
					defer mu.Unlock()
					var idle *quic.IdleTimeoutError
					var hs *quic.HandshakeTimeoutError
					switch {
					case err == nil:
						open++
						c.CloseWithError(0, "")
					case refused(err):
						nRef++
					case errors.As(err, &idle), errors.As(err, &hs):
						nTimeout++
					default:
						other = append(other, err)
					}
				})
			}
			wg.Wait()
			most := 1 + int(time.Since(start).Seconds()*rate) + 1
			if open < 1 || open > most || len(other) > 0 {
				t.Fatalf("%d handshakes at --h3-handshake-rate %d: %d open (want 1 to %d), %d refused, %d timed out, other errors %v", flood, rate, open, most, nRef, nTimeout, other)
			}
			dropped := h3Metric(t, srv, `wirebench_h3_dropped_initials_total{reason="rate"}`)
			second := h3Metric(t, srv, "wirebench_h3_rate_refused_initials_total")
			if filter {
				if nRef != 0 || second != 0 || nTimeout != flood-open || dropped < int64(nTimeout) {
					t.Errorf("filter: %d CONNECTION_REFUSED (%d Initials refused by quic-go), %d timed out of %d not admitted, %d Initials dropped; want none refused, the rest timed out, each dropped at least once", nRef, second, nTimeout, flood-open, dropped)
				}
				return
			}
			if nRef != flood-open || dropped != 0 || second < int64(nRef) {
				t.Errorf("no filter: %d refused of %d not admitted, %d Initials refused by quic-go, %d dropped; want every other client refused at once", nRef, flood-open, second, dropped)
			}
		})
	}
}

// floodInitials sends from 127.0.0.2 the Initial packets of n new
// connections (a reused ClientHello, as bench/h3flood does) and waits
// until the server has answered each with something; the connections it
// admitted stay half-open until its handshake timeout.
func floodInitials(t *testing.T, srv *server.Server, n int) {
	t.Helper()
	pc, raddr, scid, hello := floodSocket(t, srv)
	defer pc.Close()
	var buf []byte
	var err error
	for range n {
		if _, buf, err = quicflood.Connection(pc, raddr, hello, scid, buf); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond) // within the socket's buffer
	}
}

// waitHandled waits until the server has admitted, refused or dropped n
// connections: open ones plus Initials refused or dropped for any reason
// (a refused connection's second Initial is refused too, so this is a
// lower bound).
func waitHandled(t *testing.T, srv *server.Server, n int64) {
	t.Helper()
	deadline := time.Now().Add(hang)
	for {
		var got int64
		for _, m := range []string{"wirebench_h3_open_connections", "wirebench_h3_refused_initials_total",
			"wirebench_h3_rate_refused_initials_total", "wirebench_h3_source_refused_initials_total",
			`wirebench_h3_dropped_initials_total{reason="source"}`, `wirebench_h3_dropped_initials_total{reason="rate"}`} {
			got += h3Metric(t, srv, m)
		}
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d connections admitted or refused after %v", got, n, hang)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestH3PerSourceBound: one host flooding Initials (127.0.0.2, nothing
// spoofed, each connection left half-open) took every --h3-max-conns slot
// and the whole --h3-handshake-rate bucket, and a client from another
// address (127.0.0.1) was refused until the flood's handshakes timed out.
// Now one source gets half of each by default; the other client gets in.
func TestH3PerSourceBound(t *testing.T) {
	t.Run("connections", func(t *testing.T) {
		const maxConns = 20
		// No Retry (--h3-retry-after -1): the flood's silence would turn
		// its connections away before the cap this tests.
		srv := startH3(t, server.Options{H3: server.H3{MaxConns: maxConns, HandshakeRate: -1, RetryAfter: -1}})
		floodInitials(t, srv, 2*maxConns)
		waitHandled(t, srv, 2*maxConns)
		c, err := dialQUIC(t, srv, nil)
		if err != nil {
			t.Fatalf("a client from another address while one floods: %v", err)
		}
		c.CloseWithError(0, "")
		if got := h3Metric(t, srv, "wirebench_h3_source_refused_initials_total"); got < maxConns*2-maxConns/2 {
			t.Errorf("wirebench_h3_source_refused_initials_total %d, want at least one per refused connection, %d", got, maxConns*2-maxConns/2)
		}
	})
	t.Run("rate", func(t *testing.T) {
		const rate = 20
		srv := startH3(t, server.Options{H3: server.H3{HandshakeRate: rate, RetryAfter: -1}})
		floodInitials(t, srv, 2*rate)
		waitHandled(t, srv, 2*rate)
		c, err := dialQUIC(t, srv, nil)
		if err != nil {
			t.Fatalf("a client from another address after one took its share of the handshake rate: %v", err)
		}
		c.CloseWithError(0, "")
	})
}

// floodCounted sends from 127.0.0.2 the Initial packets of n new
// connections, as floodInitials does, calling during once half of them are
// sent; it then waits until the server has handled all n and 300 ms more
// for the last replies, and returns the datagrams the flood got back: the
// stateless refusals (a reply from the connection ID the flood chose: the
// server holds no connection for it) and the rest (replies of connections
// it admitted).
func floodCounted(t *testing.T, srv *server.Server, n int, during func()) (refusals, admittedReplies int) {
	t.Helper()
	pc, raddr, scid, hello := floodSocket(t, srv)
	defer pc.Close()
	pc.SetReadBuffer(4 << 20)
	var mu sync.Mutex
	sent := map[string]bool{}
	var nRef, nOther atomic.Int64
	read := readDatagrams(pc, func(d []byte) {
		_, ref := quicflood.RefusalOf(d, func(id []byte) bool { mu.Lock(); defer mu.Unlock(); return sent[string(id)] })
		if ref {
			nRef.Add(1)
		} else {
			nOther.Add(1)
		}
	})
	var buf []byte
	var err error
	for i := range n {
		dcid := []byte(fmt.Sprintf("flood%05d", i))
		mu.Lock()
		sent[string(dcid)] = true
		mu.Unlock()
		if _, buf, err = quicflood.ConnectionTo(pc, raddr, dcid, hello, scid, buf); err != nil {
			t.Fatal(err)
		}
		if i == n/2 && during != nil {
			during()
		}
		time.Sleep(time.Millisecond) // within the socket's buffer
	}
	waitHandled(t, srv, int64(n))
	time.Sleep(300 * time.Millisecond)
	pc.Close()
	<-read
	return int(nRef.Load()), int(nOther.Load())
}

// TestH3InitialFloodNoRefusals: one host sends the Initials of 300 new
// connections, far past its share of --h3-handshake-rate 100 (50/s,
// --h3-handshake-burst 100ms: 5 at once). quic-go used to answer every Initial it turned away with a
// CONNECTION_REFUSED it sealed and sent (a key derivation, an AEAD seal
// and a sendmsg each: 30% of the server's CPU in a measured flood); the
// socket filter drops them unanswered. So: no refusal comes back, the
// drops are counted, the flood is admitted no more than its bucket gives,
// and a client from another address completes its handshake mid-flood.
// Without the filter (the second subtest, which shows the count can fail)
// every connection turned away is refused.
func TestH3InitialFloodNoRefusals(t *testing.T) {
	const n, rate = 300, 100
	for _, filter := range []bool{true, false} {
		t.Run(fmt.Sprintf("filter=%v", filter), func(t *testing.T) {
			// No Retry: it would answer the silent flood before the
			// rates this tests (TestH3RetryForSilentSource).
			srv := startH3(t, server.Options{H3: server.H3{HandshakeRate: rate, HandshakeBurst: 100 * time.Millisecond, NoInitialFilter: !filter, RetryAfter: -1}})
			var victim error
			start := time.Now()
			refusals, replies := floodCounted(t, srv, n, func() {
				c, err := dialQUIC(t, srv, nil)
				if victim = err; err == nil {
					c.CloseWithError(0, "")
				}
			})
			el := time.Since(start)
			if victim != nil {
				t.Errorf("a client from another address mid-flood: %v", victim)
			}
			// The flood's connections that got in stay half-open (the
			// victim's closed; allow for it still counted).
			admitted := h3Metric(t, srv, "wirebench_h3_open_connections")
			most := int64(rate/2/10 + el.Seconds()*rate/2 + 2)
			dropped := h3Metric(t, srv, `wirebench_h3_dropped_initials_total{reason="source"}`)
			second := h3Metric(t, srv, "wirebench_h3_source_refused_initials_total") + h3Metric(t, srv, "wirebench_h3_rate_refused_initials_total")
			t.Logf("filter %v: %d connections in %v, %d admitted, %d Initials dropped, %d refused by quic-go; replies: %d refusals, %d of admitted connections",
				filter, n, el.Round(time.Millisecond), admitted, dropped, second, refusals, replies)
			if admitted < 1 || admitted > most {
				t.Errorf("%d of the flood's connections admitted in %v, want 1 to %d", admitted, el, most)
			}
			if filter {
				if refusals != 0 || second != 0 || dropped < int64(n)-admitted {
					t.Errorf("%d refusals came back (%d Initials refused by quic-go), %d dropped; want none refused, at least %d dropped", refusals, second, dropped, int64(n)-admitted)
				}
				return
			}
			if refusals < n/10 { // quic-go's queue of refusals (4) drops some on a busy machine
				t.Errorf("without the filter only %d refusals came back of %d connections; the count above would not tell", refusals, n)
			}
		})
	}
}

// TestH3FloodVictimServedInTurn: at the default settings one host
// (127.0.0.2) sends the Initials of 100 new connections, within its rates
// (its bucket holds 500), and a client from 127.0.0.1 then opens one.
// Their handshakes queue for the handshake gate's lanes, held by the test
// until all are queued so the queue is the same on any machine: the
// flood's up to 32 (past that its Initials are dropped at the socket; a
// few more may pass while the admitted ones make their way to the gate),
// then the other client's. The gate serves the waiting sources in turn,
// so the other client's handshake is the second given a lane, not the
// 33rd or later, and it connects while the flood's wait. The test's lanes
// are freed without a rest; the flood's handshakes then each rest their
// lane nine times as long as they held it (--h3-handshake-share 0.1).
func TestH3FloodVictimServedInTurn(t *testing.T) {
	const n = 100
	srv := startH3(t, server.Options{})
	release, grants := server.HoldH3Lanes(t, srv)
	floodInitials(t, srv, n)
	// Each connection the flood sent is queued, or both its Initials
	// were dropped (the first dropped, the second is a new connection's
	// again).
	var queued int64
	deadline := time.Now().Add(hang)
	for {
		queued = h3Metric(t, srv, "wirebench_h3_handshakes_waiting")
		if queued+h3Metric(t, srv, `wirebench_h3_dropped_initials_total{reason="queue"}`)/2 >= n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %d of the flood's %d connections queued, the rest not all dropped", hang, queued, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if queued < 32 {
		t.Fatalf("%d of the flood's handshakes queued, want at least 32", queued)
	}
	victim := make(chan error, 1)
	go func() {
		c, err := dialQUIC(t, srv, nil)
		if err == nil {
			c.CloseWithError(0, "")
		}
		victim <- err
	}()
	waitMetric(t, srv, "wirebench_h3_handshakes_waiting", queued+1)
	release()
	flood, me := netip.MustParsePrefix("127.0.0.2/32"), netip.MustParsePrefix("127.0.0.1/32")
	for i := 1; ; i++ {
		k := <-grants
		if k == me {
			if i > 2 {
				t.Errorf("the other client's handshake was given a lane %d-th, after %d of the flood's; want 2nd", i, i-1)
			}
			break
		}
		if k != flood {
			t.Fatalf("a lane given to %v", k)
		}
	}
	if err := <-victim; err != nil {
		t.Fatalf("the other client's handshake while the flood's queue: %v", err)
	}
	if got := h3Metric(t, srv, "wirebench_h3_refused_initials_total") + h3Metric(t, srv, "wirebench_h3_source_refused_initials_total"); got != 0 {
		t.Errorf("%d Initials refused; the flood's past the queue are dropped", got)
	}
}

// waitMetric waits until the unlabelled metric name reaches want.
func waitMetric(t *testing.T, srv *server.Server, name string, want int64) {
	t.Helper()
	deadline := time.Now().Add(hang)
	for {
		got := h3Metric(t, srv, name)
		if got >= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %d after %v, want %d", name, got, hang, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// victimP99 is the p99 of n GETs of url by a client whose connection is
// open, one every 2 ms, each checked for 200; with most > 0 it stops
// after that long with fewer.
func victimP99(t *testing.T, c *http.Client, url string, n int, most time.Duration) time.Duration {
	t.Helper()
	lat := make([]time.Duration, 0, n)
	end := time.Now().Add(most)
	for len(lat) < n && (most <= 0 || time.Now().Before(end)) {
		start := time.Now()
		resp, err := c.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("victim: %d", resp.StatusCode)
		}
		lat = append(lat, time.Since(start))
		time.Sleep(2 * time.Millisecond)
	}
	slices.Sort(lat)
	return lat[len(lat)*99/100]
}

// TestH3HandshakeFloodLatency (timing): a client with its connection open
// fetches GET /users/1 every 2 ms, quiet and then while 16 dialers flood
// the listener with handshakes, each connection closed as soon as it is
// up (so --h3-max-conns never fills and only the handshake rate bounds the
// server's work); once unbounded, once at --h3-handshake-rate 50. The
// victim's p99 against its quiet p99 is logged, not asserted: the flood's
// own dialers run in this process, on the same CPUs as the server.
func TestH3HandshakeFloodLatency(t *testing.T) {
	testkit.NeedTiming(t)
	for _, rate := range []int{-1, 50} {
		srv := startH3(t, server.Options{SeedUsers: 10, H3: server.H3{HandshakeRate: rate}})
		c := h3Client(t, srv)
		url := "https://" + srv.H3Addr() + "/users/1"
		p99 := func(n int) time.Duration { return victimP99(t, c, url, n, 2*time.Second) }
		p99(50) // warm
		quiet := p99(300)
		done := make(chan struct{})
		var admitted, turned atomic.Int64
		var flood sync.WaitGroup
		for range 16 {
			flood.Go(func() {
				for {
					select {
					case <-done:
						return
					default:
					}
					if qc, err := dialQUIC(t, srv, nil); err == nil {
						admitted.Add(1)
						qc.CloseWithError(0, "")
					} else {
						turned.Add(1)
					}
				}
			})
		}
		start := time.Now()
		during := p99(300)
		close(done)
		flood.Wait()
		el := time.Since(start).Seconds()
		t.Logf("--h3-handshake-rate %d: victim p99 %v quiet, %v during the flood (%.1fx); flood %.0f handshakes/s admitted, %.0f/s refused",
			rate, quiet, during, float64(during)/float64(quiet), float64(admitted.Load())/el, float64(turned.Load())/el)
	}
}

// neverRead sends streams GETs of path on each of conns QUIC connections
// and never reads a body: the client's flow-control windows stay at their
// initial size, so the server's writes block once they are full — the
// replies' and, the window being the connection's too, those of the
// other streams. stop closes the connections (every stream with them)
// and returns the statuses received, -1 counting the requests that got
// none. The connections come from 127.0.0.1, one source.
func neverRead(t *testing.T, srv *server.Server, conns, streams int, path string) (stop func() map[int]int) {
	return neverReadFrom(t, srv, conns, streams, path, false)
}

// neverReadFrom is neverRead with, if sources, each connection from an
// address of its own (127.0.0.2, .3, …): as many sources, each with its
// own share of the reply budget.
func neverReadFrom(t *testing.T, srv *server.Server, conns, streams int, path string, sources bool) (stop func() map[int]int) {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(srv.Cert().PEM)
	var (
		trs    []*http3.Transport
		qtrs   []*quic.Transport
		mu     sync.Mutex
		got    = map[int]int{}
		bodies []io.ReadCloser
		wg     sync.WaitGroup
	)
	for i := range conns {
		tr := &http3.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, DisableCompression: true}
		if sources {
			pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, byte(2+i))})
			if err != nil {
				t.Fatal(err)
			}
			qtr := &quic.Transport{Conn: pc}
			qtrs = append(qtrs, qtr)
			tr.Dial = func(ctx context.Context, addr string, tc *tls.Config, qc *quic.Config) (*quic.Conn, error) {
				ua, err := net.ResolveUDPAddr("udp", addr)
				if err != nil {
					return nil, err
				}
				return qtr.DialEarly(ctx, ua, tc, qc)
			}
		}
		trs = append(trs, tr)
		c := &http.Client{Transport: tr}
		for range streams {
			wg.Go(func() {
				resp, err := c.Get("https://" + srv.H3Addr() + path)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					got[-1]++
					return
				}
				got[resp.StatusCode]++
				bodies = append(bodies, resp.Body)
			})
		}
	}
	return func() map[int]int {
		for _, tr := range trs {
			tr.Close()
		}
		for _, qtr := range qtrs {
			qtr.Close()
			qtr.Conn.Close()
		}
		wg.Wait()
		for _, b := range bodies {
			b.Close()
		}
		return got
	}
}

// TestH3NeverReadStreams: 10 QUIC connections x 100 GETs of a 12 MB list,
// never read, took the heap to 2.1 GB under a 512 MiB --max-reply-memory:
// each list past the budget was encoded before being shed (503), 12 MB of
// garbage and an encoding slot each time. Now, while the replies waiting
// for the client hold the budget, a list that would not fit is shed
// before its encoding; the replies held stay within the budget, and come
// back when the client goes. Here one stream a connection, each from an
// address of its own (a connection's second list waits for its first:
// TestH3NeverReadOneConnection; a source's, for its unread ones:
// TestH3NeverReadManyConnections).
func TestH3NeverReadStreams(t *testing.T) {
	const users, streams, budget = 60_000, 24, 16 << 20 // ~7 MiB of JSON each: the budget holds two
	srv := startH3(t, server.Options{SeedUsers: users, Timeouts: server.Timeouts{Write: hang}, HTTP: httpapi.Options{MaxReplyBytes: budget}})
	base := heapAfterGC()
	stop := neverReadFrom(t, srv, streams, 1, "/users", true)
	defer stop()
	// Every request answered or shed, the writes waiting for the client.
	deadline := time.Now().Add(hang)
	for countRequests(t, srv, "/users") < streams {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d requests handled after %v", countRequests(t, srv, "/users"), streams, hang)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if held := h3Metric(t, srv, "wirebench_http_reply_bytes_held"); held <= 0 || held > budget {
		t.Errorf("wirebench_http_reply_bytes_held %d while replies wait, want 1..%d", held, budget)
	}
	// Two served; of the rest, those that began encoding before the
	// budget filled (at most the encoding slots, here a few) are shed
	// after it, every other one before.
	before, after := shedCounts(t, srv)
	if before+after != streams-2 || before < streams-2-4 {
		t.Errorf("shed %d before encoding and %d after, of %d requests (the budget holds 2)", before, after, streams)
	}
	if live := heapAfterGC(); live > base+budget*2+64<<20 {
		t.Errorf("live heap %d MiB while %d replies wait (%d MiB before, budget %d MiB)", live>>20, streams, base>>20, budget>>20)
	}
	got := stop()
	if got[200]+got[503]+got[-1] != streams || got[200] > 2 {
		t.Errorf("statuses %v (-1: none received), want at most 2 200s", got)
	}
	for h3Metric(t, srv, "wirebench_http_reply_bytes_held") != 0 {
		if time.Now().After(deadline) {
			t.Fatal("reply budget still held after the client went")
		}
		time.Sleep(20 * time.Millisecond)
	}
	checkHeap(t, base)
}

// TestH3NeverReadOneConnection: one QUIC connection's never-read GETs of
// a large list cost the server one encoding, not one each: the others
// wait, before their encoding, for the first to be written, within a
// budget that would hold them all. 10 connections x 100 such GETs of a 12
// MB list had the server encode ~45 lists in the attack's first seconds
// (the 512 MiB budget's worth), one CPU saturated and every other
// client's p99 at 200+ ms. When the client goes, the waiters are shed
// without their encoding and the share comes back.
func TestH3NeverReadOneConnection(t *testing.T) {
	const users, streams, budget = 60_000, 24, 256 << 20 // ~7 MiB of JSON each; a connection's share 8 MiB: one
	srv := startH3(t, server.Options{SeedUsers: users, Timeouts: server.Timeouts{Write: hang}, HTTP: httpapi.Options{MaxReplyBytes: budget}})
	stop := neverRead(t, srv, 1, streams, "/users")
	defer stop()
	deadline := time.Now().Add(hang)
	// The first list encoded and held, the others waiting.
	for h3Metric(t, srv, "wirebench_http_replies_waiting_connection") != streams-1 || h3Metric(t, srv, "wirebench_http_reply_bytes_held") == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d requests wait for their connection's first reply after %v (%d handled, %d bytes held)", h3Metric(t, srv, "wirebench_http_replies_waiting_connection"),
				streams-1, hang, countRequests(t, srv, "/users"), h3Metric(t, srv, "wirebench_http_reply_bytes_held"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if held := h3Metric(t, srv, "wirebench_http_reply_bytes_held"); held < 6<<20 || held > 14<<20 {
		t.Errorf("wirebench_http_reply_bytes_held %d while one connection's %d never-read lists wait, want one list (~7 MiB, in a buffer of up to twice that)", held, streams)
	}
	if before, after := shedCounts(t, srv); before+after != 0 {
		t.Errorf("shed %d before encoding and %d after while the budget had room", before, after)
	}
	got := stop()
	if got[200] > 1 || got[200]+got[503]+got[-1] != streams {
		t.Errorf("statuses %v (-1: none received), want at most one 200", got)
	}
	for h3Metric(t, srv, "wirebench_http_reply_bytes_held") != 0 || h3Metric(t, srv, "wirebench_http_replies_waiting_connection") != 0 {
		if time.Now().After(deadline) {
			t.Fatal("reply budget held or requests waiting after the client went")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := h3Metric(t, srv, "wirebench_http_replies_waited_connection_total"); n != streams-1 {
		t.Errorf("%d requests waited for their connection's share, want %d", n, streams-1)
	}
}

// TestH3NeverReadManyConnections: one source's never-read GETs of a large
// list over many connections, one stream each, hold its share of the
// budget (1/8), not the budget: its later lists wait, before their
// encoding, for its unread ones to be written. 60 connections × one GET
// of a 12 MB list escaped the connections' shares: the budget's ~43 lists
// were encoded and held, RSS 720 MiB over a 512 MiB budget. Its first 4
// lists here (28 MiB: a fifth would be past the source's 32 MiB share),
// left unread, make its 16 later ones wait, while a list for another
// source is served; when the client goes, the waiters are shed without
// their encoding.
func TestH3NeverReadManyConnections(t *testing.T) {
	const users, first, later, budget = 60_000, 4, 16, 256 << 20 // 7.0 MiB of JSON each; a source's share 32 MiB
	srv := startH3(t, server.Options{SeedUsers: users, Timeouts: server.Timeouts{Write: hang}, HTTP: httpapi.Options{MaxReplyBytes: budget}})
	deadline := time.Now().Add(hang)
	stop1 := neverRead(t, srv, first, 1, "/users")
	defer stop1()
	for countRequests(t, srv, "/users") < first {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of the first %d lists handled after %v", countRequests(t, srv, "/users"), first, hang)
		}
		time.Sleep(20 * time.Millisecond)
	}
	held := h3Metric(t, srv, "wirebench_http_reply_bytes_held")
	time.Sleep(time.Second) // unread long enough to count (a quarter of a second)
	stop2 := neverRead(t, srv, later, 1, "/users")
	defer stop2()
	for h3Metric(t, srv, "wirebench_http_replies_waiting_source") != later {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d later lists wait for their source's unread ones after %v (%d handled, %d bytes held)", h3Metric(t, srv, "wirebench_http_replies_waiting_source"),
				later, hang, countRequests(t, srv, "/users"), h3Metric(t, srv, "wirebench_http_reply_bytes_held"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if now := h3Metric(t, srv, "wirebench_http_reply_bytes_held"); now != held {
		t.Errorf("wirebench_http_reply_bytes_held %d while the later lists wait, %d before them", now, held)
	}
	// Another source is served meanwhile.
	other := neverReadFrom(t, srv, 1, 1, "/users", true)
	for countRequests(t, srv, "/users") < first+1 {
		if time.Now().After(deadline) {
			t.Fatalf("another source's list not handled after %v", hang)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := other(); got[200] != 1 {
		t.Errorf("another source's list: statuses %v, want one 200", got)
	}
	if before, after := shedCounts(t, srv); before+after != 0 {
		t.Errorf("shed %d before encoding and %d after while the budget had room", before, after)
	}
	got := stop2()
	if got[200] != 0 || got[503]+got[-1] != later {
		t.Errorf("the later lists' statuses %v (-1: none received), want none served", got)
	}
	stop1()
	for h3Metric(t, srv, "wirebench_http_reply_bytes_held") != 0 || h3Metric(t, srv, "wirebench_http_replies_waiting_source") != 0 {
		if time.Now().After(deadline) {
			t.Fatal("reply budget held or requests waiting after the client went")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := h3Metric(t, srv, "wirebench_http_replies_waited_source_total"); n != later {
		t.Errorf("%d requests waited for their source's share, want %d", n, later)
	}
}

// TestH3ReadingSourceNeverWaits (timing): a source's replies that are
// being read do not count against its share, so a benchmark reading
// large lists over many connections from one address (12 × 7 MiB at
// once, three times the source's 32 MiB share) never waits for it. Left
// out of the main suite: a reader starved of its CPU for a quarter of a
// second counts as not reading.
func TestH3ReadingSourceNeverWaits(t *testing.T) {
	testkit.NeedTiming(t)
	const users, conns, rounds, budget = 60_000, 12, 2, 256 << 20
	srv := startH3(t, server.Options{SeedUsers: users, HTTP: httpapi.Options{MaxReplyBytes: budget}})
	var wg sync.WaitGroup
	var ok atomic.Int64
	for range conns {
		c := h3Client(t, srv)
		wg.Go(func() {
			for range rounds {
				resp, err := c.Get("https://" + srv.H3Addr() + "/users")
				if err != nil {
					t.Error(err)
					return
				}
				n, err := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err == nil && resp.StatusCode == 200 && n > 6<<20 {
					ok.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if ok.Load() != conns*rounds {
		t.Errorf("%d of %d lists read whole", ok.Load(), conns*rounds)
	}
	if n := h3Metric(t, srv, "wirebench_http_replies_waited_source_total"); n != 0 {
		t.Errorf("%d of %d requests of a reading source waited for its share", n, conns*rounds)
	}
}

// shedCounts reads wirebench_http_replies_shed_total from /metrics.
func shedCounts(t *testing.T, srv *server.Server) (before, after int) {
	t.Helper()
	_, body := get(t, "GET", "http://"+srv.HTTPAddr()+"/metrics", "", "", "")
	for line := range strings.Lines(body) {
		fmt.Sscanf(line, `wirebench_http_replies_shed_total{when="before_encoding"} %d`, &before)
		fmt.Sscanf(line, `wirebench_http_replies_shed_total{when="after_encoding"} %d`, &after)
	}
	return before, after
}

// TestH3AttacksBoundedMemory (timing): while others flood the listener
// with handshakes past --h3-max-conns and hold never-read list streams,
// the heap stays within the reply budget + 128 MiB (sampled every 5 ms)
// and a client with its connection open is served throughout. Its p99
// under each attack against its quiet p99 is logged, not asserted: the
// goal is under twice the quiet p99, and on a busy 2-CPU box the flood
// (its handshakes' cryptography in this same process) took it from
// 0.8 ms to 74 ms, the never-read streams to 7 ms (docs/http3.md).
func TestH3AttacksBoundedMemory(t *testing.T) {
	testkit.NeedTiming(t)
	const users, budget = 60_000, 64 << 20
	srv := startH3(t, server.Options{SeedUsers: users, HTTP: httpapi.Options{MaxReplyBytes: budget}, H3: server.H3{MaxConns: 32}})
	c := h3Client(t, srv)
	url := "https://" + srv.H3Addr() + "/users/1"
	p99 := func(n int) time.Duration { return victimP99(t, c, url, n, 0) }
	p99(50) // warm
	base := heapAfterGC()
	quiet := p99(500)
	var peak atomic.Uint64
	sampling := make(chan struct{})
	go func() {
		for {
			select {
			case <-sampling:
				return
			case <-time.After(5 * time.Millisecond):
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				if m.HeapAlloc > peak.Load() {
					peak.Store(m.HeapAlloc)
				}
			}
		}
	}()
	defer close(sampling)
	limit := func(name string, got time.Duration) {
		if h := peak.Load(); h > base+budget+128<<20 {
			t.Errorf("%s: heap peaked at %d MiB, %d MiB before, budget %d MiB", name, h>>20, base>>20, budget>>20)
		}
		t.Logf("%s: victim p99 %v (quiet %v), heap peak %d MiB (base %d MiB)", name, got, quiet, peak.Load()>>20, base>>20)
	}

	// The handshake flood: 300 handshakes, 32 at a time, past a cap of 32.
	var flood sync.WaitGroup
	var conns sync.Map
	sem := make(chan struct{}, 32)
	for i := range 300 {
		flood.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if qc, err := dialQUIC(t, srv, nil); err == nil {
				conns.Store(i, qc)
			}
		})
	}
	limit("handshake flood", p99(300))
	flood.Wait()
	conns.Range(func(_, v any) bool { v.(*quic.Conn).CloseWithError(0, ""); return true })

	// Never-read streams: 4 connections x 25 GETs of a 7 MiB list.
	stop := neverRead(t, srv, 4, 25, "/users")
	limit("never-read streams", p99(500))
	stop()
}

// TestH3RetryForSilentSource: a host sending new connections' Initials
// (a reused ClientHello, as bench/h3flood -mode initials does) and never
// answering the server's flight was given a whole handshake (key exchange
// and signature) for each, and each half-open connection resent its
// flight until the handshake timeout, up to its source's 500. Now once
// --h3-retry-after of a source's handshakes wait unanswered, its new
// connections get a Retry instead: the flood holds no more than that
// many, while a real client from the same address follows the Retry and
// connects, and one from another address gets no Retry. Each connection
// is sent once the server has handled the one before (admitted and
// flight out, or retried), so the count is exact on any machine; the gate
// is off (--h3-handshake-share 1) so that a flight goes out at once.
func TestH3RetryForSilentSource(t *testing.T) {
	const after, n = 4, 24
	srv := startH3(t, server.Options{H3: server.H3{RetryAfter: after, HandshakeShare: 1}})
	pc, raddr, scid, hello := floodSocket(t, srv)
	defer pc.Close()
	var retryPackets atomic.Int64
	read := readDatagrams(pc, func(d []byte) {
		// A QUIC v1 Retry: long header, type 3.
		if len(d) > 5 && d[0]&0x80 != 0 && d[0]>>4&3 == 3 {
			retryPackets.Add(1)
		}
	})
	var buf []byte
	var err error
	for i := range n {
		dcid := []byte(fmt.Sprintf("silent%04d", i))
		if _, buf, err = quicflood.ConnectionTo(pc, raddr, dcid, hello, scid, buf); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(hang)
		for {
			// Its two Initials each retried (or dropped past the source's
			// Retries), or it is admitted with its flight out (counted
			// silent).
			open, silent := h3Metric(t, srv, "wirebench_h3_open_connections"), h3Metric(t, srv, "wirebench_h3_silent_handshakes")
			if open == silent && open+retriedOrDropped(t, srv)/2 >= int64(i+1) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("connection %d not handled after %v: %d open, %d silent", i, hang, open, silent)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	if open := h3Metric(t, srv, "wirebench_h3_open_connections"); open > after {
		t.Errorf("%d of the silent flood's %d connections admitted, want at most --h3-retry-after %d", open, n, after)
	}
	retried := h3Metric(t, srv, "wirebench_h3_retries_total")
	if got := retriedOrDropped(t, srv); got < n-after {
		t.Errorf("%d Initials retried or dropped, want at least one for each of the %d connections past %d", got, n-after, after)
	}
	// Then as fast as it can: the source gets at most its bucket of
	// Retries, the rest of its Initials dropped unanswered (each Retry
	// costs a sealed token and a sendmsg, and the flood never follows one).
	const m = 200
	r0, d0 := retried, h3Metric(t, srv, `wirebench_h3_dropped_initials_total{reason="retry"}`)
	start := time.Now()
	for i := range m {
		dcid := []byte(fmt.Sprintf("blast%05d", i))
		if _, buf, err = quicflood.ConnectionTo(pc, raddr, dcid, hello, scid, buf); err != nil {
			t.Fatal(err)
		}
	}
	waitDropped := time.Now().Add(hang)
	for retriedOrDropped(t, srv)-r0-d0 < 2*m && time.Now().Before(waitDropped) {
		time.Sleep(5 * time.Millisecond)
	}
	el := time.Since(start)
	retried = h3Metric(t, srv, "wirebench_h3_retries_total")
	most := int64(server.H3RetryBurst + server.H3RetryRate*el.Seconds() + 2)
	t.Logf("%d connections' Initials in %v: %d retried, %d dropped", m, el, retried-r0, h3Metric(t, srv, `wirebench_h3_dropped_initials_total{reason="retry"}`)-d0)
	if retried-r0 > most {
		t.Errorf("%d of the %d Initials retried in %v, want at most the source's bucket, %d", retried-r0, 2*m, el, most)
	}
	time.Sleep(100 * time.Millisecond) // the last Retries on their way
	pc.Close()
	<-read
	if retryPackets.Load() == 0 {
		t.Errorf("no Retry packet came back of %d retried Initials", retried)
	}

	// A real client from the flood's address reads the Retry and connects.
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(srv.Cert().PEM)
	tc := &tls.Config{RootCAs: pool, NextProtos: []string{http3.NextProtoH3}}
	same, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 2)})
	if err != nil {
		t.Fatal(err)
	}
	tr := &quic.Transport{Conn: same}
	defer tr.Close()
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	before := h3Metric(t, srv, "wirebench_h3_retries_total")
	c, err := tr.Dial(ctx, raddr, tc, nil)
	if err != nil {
		t.Fatalf("a real client from the silent source's address: %v", err)
	}
	c.CloseWithError(0, "")
	if got := h3Metric(t, srv, "wirebench_h3_retries_total"); got == before {
		t.Errorf("the real client from the silent source was not retried (%d Retries before and after)", got)
	}
	// One from another address gets no Retry.
	before = h3Metric(t, srv, "wirebench_h3_retries_total")
	if c, err = dialQUIC(t, srv, nil); err != nil {
		t.Fatalf("a client from another address: %v", err)
	}
	c.CloseWithError(0, "")
	if got := h3Metric(t, srv, "wirebench_h3_retries_total"); got != before {
		t.Errorf("a client from another address retried (%d Retries, %d before)", got, before)
	}
}

// retriedOrDropped is the Initials the server retried or dropped past a
// source's Retries.
func retriedOrDropped(t *testing.T, srv *server.Server) int64 {
	return h3Metric(t, srv, "wirebench_h3_retries_total") + h3Metric(t, srv, `wirebench_h3_dropped_initials_total{reason="retry"}`)
}

// floodSocket is what a flood test sends from: a socket on 127.0.0.2 (the
// test skips without that address), the server's HTTP/3 address, and a
// reused ClientHello with its source connection ID, as bench/h3flood
// sends them. The caller closes the socket.
func floodSocket(t *testing.T, srv *server.Server) (pc *net.UDPConn, raddr *net.UDPAddr, scid, hello []byte) {
	t.Helper()
	raddr, err := net.ResolveUDPAddr("udp", srv.H3Addr())
	if err != nil {
		t.Fatal(err)
	}
	pc, err = net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 2)})
	if err != nil {
		t.Skipf("no second loopback address: %v", err)
	}
	scid = []byte{1, 2, 3, 4, 5, 6, 7, 8}
	hello, err = quicflood.ClientHello(scid)
	if err != nil {
		pc.Close()
		t.Fatal(err)
	}
	return pc, raddr, scid, hello
}

// readDatagrams hands each datagram pc receives to got, on a goroutine of
// its own, until pc is closed; the channel it returns is closed then.
func readDatagrams(pc *net.UDPConn, got func([]byte)) <-chan struct{} {
	read := make(chan struct{})
	go func() {
		defer close(read)
		b := make([]byte, 1500)
		for {
			k, _, err := pc.ReadFromUDP(b)
			if err != nil {
				return
			}
			got(b[:k])
		}
	}()
	return read
}
