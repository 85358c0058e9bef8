// Command h3flood floods an HTTP/3 (QUIC) server with new connections from
// a process of its own, so a victim's latency under the flood can be
// measured with the flood's CPU outside the server's and the victim's
// (bench/h3-flood.sh pins the three). It spoofs nothing: every packet
// leaves from the address it binds.
//
//	h3flood [-mode initials|dial|noread] [-c 16] [-rate 0] [-d 10s] [-bind 127.0.0.2:0] [-conns 10 -streams 100 -path /users -reset] ADDR
//
// -mode initials (the cheap attack): one ClientHello, made once by
// crypto/tls's QUIC client (the key shares Go's own client offers:
// X25519MLKEM768 and X25519), sent again and again, each time in the
// Initial packets of a new connection (a fresh random Destination
// Connection ID, so new Initial keys: an HKDF and an AES-GCM seal per
// packet, nothing asymmetric). The server that admits one does a whole key
// exchange and certificate signature for it and then waits for a client
// that never answers, until its handshake timeout. The replies are read
// and counted, never processed.
//
// -mode dial (the honest attack): quic-go dials on one UDP socket, each
// connection closed as soon as its handshake completes; the flooder does
// the client's share of the cryptography too.
//
// -mode noread (the memory attack): -conns HTTP/3 connections, each
// sending -streams GETs of -path (10 x 100 of /users by default) whose
// reply bodies are never read, held open for -d, then closed: the
// server's writes stop at the client's flow-control windows, and a
// server that counts its replies only until they are written holds
// every one (-c and -rate do not apply). With -reset each stream is reset
// once its reply's headers are in (the way this mode ran before
// 2026-11-29 16:00 UTC, by mistake: the request's context ended with its
// goroutine): the server's write ends there, and it goes on to the next
// reply. It prints the statuses:
//
//	h3flood noread: 10 connections x 100 GETs of /users held 6.0s: 200 x2, 503 x998, no reply x0
//
// -rate caps the new connections per second (0: as fast as -c goroutines
// go). At the end it prints one line:
//
//	h3flood initials: 84210 connections in 10.0s (8421/s), 168420 packets sent, 5012 received (402113 bytes), 4000 refusals, 0 retries
//
// (refusals: the datagrams the server sent without holding a connection —
// a stateless CONNECTION_REFUSED comes from the connection ID the flood
// chose, an admitted connection answers from one of its own —, the work a
// server that refuses rather than drops does per Initial; retries: QUIC
// Retry packets, which this flood never follows).
//
// (dial: "admitted A refused R failed F" instead of the packet counts; the
// server's /metrics say how many Initials it refused).
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/wirebench/wirebench/internal/quicflood"
)

func main() {
	mode := flag.String("mode", "initials", "initials (a reused ClientHello in new connections' Initial packets) or dial (quic-go handshakes, closed once up)")
	conc := flag.Int("c", 16, "goroutines sending")
	rate := flag.Float64("rate", 0, "new connections per second, all goroutines together (0: unbounded)")
	dur := flag.Duration("d", 10*time.Second, "how long to flood")
	bind := flag.String("bind", "127.0.0.2:0", "local UDP address (a loopback address of its own lets the server tell the flood from its other clients)")
	conns := flag.Int("conns", 10, "noread: connections")
	streams := flag.Int("streams", 100, "noread: GETs a connection, their bodies never read")
	path := flag.String("path", "/users", "noread: the path to GET")
	reset := flag.Bool("reset", false, "noread: reset each stream once its reply's headers are in (the server then writes the next reply)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: h3flood [-mode initials|dial|noread] [-c N] [-rate R] [-d D] [-bind ADDR] [-conns N -streams N -path P -reset] HOST:PORT")
		os.Exit(2)
	}
	raddr, err := net.ResolveUDPAddr("udp", flag.Arg(0))
	if err != nil {
		fail(err)
	}
	laddr, err := net.ResolveUDPAddr("udp", *bind)
	if err != nil {
		fail(err)
	}
	pace := newPacer(*rate)
	switch *mode {
	case "initials":
		err = initials(raddr, laddr, *conc, *dur, pace)
	case "dial":
		err = dial(raddr, laddr, *conc, *dur, pace)
	case "noread":
		err = noread(raddr, laddr, *conns, *streams, *path, *dur, *reset)
	default:
		err = fmt.Errorf("-mode %q: want initials, dial or noread", *mode)
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "h3flood:", err)
	os.Exit(1)
}

// pacer hands out start times at rate per second; nil: no pacing.
type pacer struct {
	mu   sync.Mutex
	next time.Time
	gap  time.Duration
}

func newPacer(rate float64) *pacer {
	if rate <= 0 {
		return nil
	}
	return &pacer{next: time.Now(), gap: time.Duration(float64(time.Second) / rate)}
}

func (p *pacer) wait() {
	if p == nil {
		return
	}
	p.mu.Lock()
	at := p.next
	p.next = p.next.Add(p.gap)
	p.mu.Unlock()
	if d := time.Until(at); d > 0 {
		time.Sleep(d)
	}
}

// dial opens and closes quic-go connections on one socket.
func dial(raddr, laddr *net.UDPAddr, conc int, dur time.Duration, pace *pacer) error {
	pc, err := net.ListenUDP("udp", laddr)
	if err != nil {
		return err
	}
	tr := &quic.Transport{Conn: pc}
	defer tr.Close()
	tc := &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h3"}, ServerName: "localhost"}
	var admitted, refused, failed atomic.Int64
	start := time.Now()
	end := start.Add(dur)
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for time.Now().Before(end) {
				pace.wait()
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				c, err := tr.Dial(ctx, raddr, tc, &quic.Config{HandshakeIdleTimeout: 2 * time.Second})
				cancel()
				var te *quic.TransportError
				switch {
				case err == nil:
					admitted.Add(1)
					c.CloseWithError(0, "")
				case errors.As(err, &te) && te.Remote && te.ErrorCode == quic.ConnectionRefused:
					refused.Add(1)
				default:
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	el := time.Since(start).Seconds()
	n := admitted.Load() + refused.Load() + failed.Load()
	fmt.Printf("h3flood dial: %d connections in %.1fs (%.0f/s): admitted %d (%.0f/s) refused %d failed %d\n",
		n, el, float64(n)/el, admitted.Load(), float64(admitted.Load())/el, refused.Load(), failed.Load())
	return nil
}

// noread opens conns HTTP/3 connections from laddr, each sending streams
// GETs of path to raddr and never reading a reply's body, holds them for
// dur and closes them.
func noread(raddr, laddr *net.UDPAddr, conns, streams int, path string, dur time.Duration, reset bool) error {
	var (
		mu      sync.Mutex
		status  = map[int]int{} // -1: no reply
		bodies  []io.ReadCloser
		wg      sync.WaitGroup
		trs     []*http3.Transport
		cancels []context.CancelFunc
	)
	start := time.Now()
	for range conns {
		pc, err := net.ListenUDP("udp", laddr)
		if err != nil {
			return err
		}
		qt := &quic.Transport{Conn: pc}
		defer qt.Close()
		tr := &http3.Transport{
			TLSClientConfig:    &tls.Config{InsecureSkipVerify: true, ServerName: "localhost"},
			DisableCompression: true,
			Dial: func(ctx context.Context, _ string, tc *tls.Config, qc *quic.Config) (*quic.Conn, error) {
				return qt.DialEarly(ctx, raddr, tc, qc)
			},
		}
		trs = append(trs, tr)
		c := &http.Client{Transport: tr}
		url := "https://" + raddr.String() + path
		for range streams {
			wg.Go(func() {
				// The request's context ends at dur, not when its headers
				// are in: http3's client resets a stream whose request
				// context ends, and a reset stream is one the server stops
				// writing (-reset: that, a stream reset once its headers
				// are in, the server encoding each reply in turn).
				ctx, cancel := context.WithTimeout(context.Background(), dur)
				if reset {
					defer cancel()
				} else {
					mu.Lock()
					cancels = append(cancels, cancel)
					mu.Unlock()
				}
				req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
				resp, err := c.Do(req)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					status[-1]++
					return
				}
				status[resp.StatusCode]++
				bodies = append(bodies, resp.Body)
			})
		}
	}
	wg.Wait() // each GET has its headers, or gave up at dur
	if d := time.Until(start.Add(dur)); d > 0 {
		time.Sleep(d)
	}
	for _, tr := range trs {
		tr.Close()
	}
	for _, b := range bodies {
		b.Close()
	}
	for _, c := range cancels {
		c()
	}
	var codes []int
	for c := range status {
		if c >= 0 {
			codes = append(codes, c)
		}
	}
	slices.Sort(codes)
	fmt.Printf("h3flood noread: %d connections x %d GETs of %s held %.1fs:", conns, streams, path, time.Since(start).Seconds())
	for _, c := range codes {
		fmt.Printf(" %d x%d,", c, status[c])
	}
	fmt.Printf(" no reply x%d\n", status[-1])
	return nil
}

// initials sends a reused ClientHello in the Initial packets of new
// connections, one connection after another per goroutine.
func initials(raddr, laddr *net.UDPAddr, conc int, dur time.Duration, pace *pacer) error {
	pc, err := net.ListenUDP("udp", laddr)
	if err != nil {
		return err
	}
	defer pc.Close()
	_ = pc.SetReadBuffer(4 << 20)
	scid := make([]byte, 8)
	rand.Read(scid)
	hello, err := quicflood.ClientHello(scid)
	if err != nil {
		return err
	}
	// Every connection ID the flood chooses starts with tag, so a reply
	// from one (a refusal) is told from one of the server's own.
	tag := make([]byte, 4)
	rand.Read(tag)
	ours := func(id []byte) bool { return len(id) == 8 && bytes.Equal(id[:4], tag) }
	var conns, sent, recv, recvBytes, refusals, retries atomic.Int64
	go func() {
		buf := make([]byte, 1500)
		for {
			n, _, err := pc.ReadFromUDP(buf)
			if err != nil {
				return
			}
			recv.Add(1)
			recvBytes.Add(int64(n))
			if _, ref := quicflood.RefusalOf(buf[:n], ours); ref {
				refusals.Add(1)
			} else if n > 5 && buf[0]&0x80 != 0 && buf[0]>>4&3 == 3 { // a v1 Retry
				retries.Add(1)
			}
		}
	}()
	start := time.Now()
	end := start.Add(dur)
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			var pkt []byte
			dcid := make([]byte, 8)
			for time.Now().Before(end) {
				pace.wait()
				copy(dcid, tag)
				rand.Read(dcid[4:])
				var n int
				n, pkt, _ = quicflood.ConnectionTo(pc, raddr, dcid, hello, scid, pkt)
				sent.Add(int64(n))
				conns.Add(1)
			}
		})
	}
	wg.Wait()
	el := time.Since(start).Seconds()
	time.Sleep(200 * time.Millisecond) // the last replies
	fmt.Printf("h3flood initials: %d connections in %.1fs (%.0f/s), %d packets sent, %d received (%d bytes), %d refusals, %d retries\n",
		conns.Load(), el, float64(conns.Load())/el, sent.Load(), recv.Load(), recvBytes.Load(), refusals.Load(), retries.Load())
	return nil
}
