package h3

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"io"
	"math/big"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/wirebench/wirebench/internal/testkit"
)

// A server that allowed early data in its ticket and then rejects it
// (here: restarted on the same port and session-ticket key without 0-RTT,
// as a fleet behind one name may be): the requests sent early fail with
// quic.Err0RTTRejected inside the pool and go again on a connection
// dialed in 1-RTT; none is lost or doubled, and the client counts the
// connections as refused, not as 0-RTT.
func TestZeroRTTRejectedFallsBack(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign}
	der, _ := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	leaf, _ := x509.ParseCertificate(der)
	roots := x509.NewCertPool()
	roots.AddCert(leaf)
	var ticketKey [32]byte
	rand.Read(ticketKey[:])
	var requests, used atomic.Int64
	serve := func(port int, allow bool) (string, func()) {
		udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
		if err != nil {
			t.Fatal(err)
		}
		srv := &http3.Server{
			TLSConfig:  http3.ConfigureTLSConfig(tlsWithTicketKey(der, key, ticketKey)),
			QUICConfig: &quic.Config{Allow0RTT: allow},
			Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				requests.Add(1)
				w.Write([]byte("ok"))
			}),
			ConnContext: func(ctx context.Context, c *quic.Conn) context.Context {
				go func() {
					select {
					case <-c.HandshakeComplete():
					case <-c.Context().Done():
					}
					select { // both may be ready: a completed handshake counts
					case <-c.HandshakeComplete():
						if c.ConnectionState().Used0RTT {
							used.Add(1)
						}
					default:
					}
				}()
				return ctx
			},
		}
		done := make(chan struct{})
		go func() { srv.Serve(udp); close(done) }()
		return udp.LocalAddr().String(), func() { srv.Close(); udp.Close(); <-done }
	}
	addr, stopA := serve(0, true)
	p := NewPool(2, addr, 10*time.Second, &tls.Config{RootCAs: roots})
	p.Enable0RTT()
	p.Warm(context.Background()) // the ticket, with early data allowed
	if z := p.ZeroRTT(); z.NoTicket != "" {
		t.Fatal(z.NoTicket)
	}
	stopA()
	_, stopB := serve(addrPort(t, addr), false) // same port and ticket key, 0-RTT now refused
	defer stopB()
	defer p.Close() // first: the server's Close waits for its connections to end
	for vu := range 4 {
		resp, err := p.Client(vu).Get("https://" + addr + "/")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "ok" {
			t.Fatalf("body %q", b)
		}
	}
	p.Close()
	z := p.ZeroRTT()
	if requests.Load() != 4 || used.Load() != 0 {
		t.Errorf("server: %d requests (want 4), %d 0-RTT connections (want 0)", requests.Load(), used.Load())
	}
	// The first connection's early data was rejected and it was dialed
	// again in 1-RTT; the second was too, or (if the server's new ticket,
	// which allows no early data, had arrived by then) sent nothing early.
	if z.Used != 0 || z.Refused < 1 || len(z.Resumed) != 2+int(z.Refused) || z.NoEarly != int64(len(z.Resumed))-z.Refused {
		t.Errorf("client %+v: want every connection refused or without early data, each refused one dialed again", z)
	}
	// Each refused connection's first request left early unless the VU
	// was descheduled between dial and send for the loopback handshake's
	// round trip (then it went, once, on the 1-RTT connection only).
	if z.EarlyRequests < z.Refused {
		if testkit.Timing() {
			t.Errorf("%d requests sent early, want one per refused connection: %+v", z.EarlyRequests, z)
		} else {
			t.Logf("%d requests sent early for %d refused connections (a race with the handshake; checked with WIREBENCH_TIMING=1)", z.EarlyRequests, z.Refused)
		}
	}
}

func addrPort(t *testing.T, addr string) int {
	t.Helper()
	a, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return a.Port
}

// tlsWithTicketKey is a server config whose session tickets both servers
// of the test can decrypt (one key, set through SetSessionTicketKeys).
func tlsWithTicketKey(der []byte, key crypto.PrivateKey, ticketKey [32]byte) *tls.Config {
	c := &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	c.SetSessionTicketKeys([][32]byte{ticketKey})
	return c
}
