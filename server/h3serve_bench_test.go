package server_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"io"
	"math/big"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/quic-go/quic-go/http3"

	"github.com/wirebench/wirebench/bench/servercpu"
	"github.com/wirebench/wirebench/server"
	"github.com/wirebench/wirebench/store"
)

// BenchmarkH3Get: GET /users/1 over HTTP/3 in one process, one request at
// a time from one http3.Transport, against the reference server's HTTP/3
// listener (ours) and quic-go's http3.Server around the bare handler
// (bare, bench/h3bare's server): the client is the same, so the
// difference in allocations per request is the servers'
// (go test ./server -run '^$' -bench H3Get -benchmem; -memprofile for
// where).
func BenchmarkH3Get(b *testing.B) {
	const users = 1000
	b.Run("bare", func(b *testing.B) {
		st := store.NewMemory(store.Options{})
		if err := st.Seed(users, 0); err != nil {
			b.Fatal(err)
		}
		cert, roots := benchCert(b)
		pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			b.Fatal(err)
		}
		srv := &http3.Server{
			Handler:   servercpu.BareHandler(st.ListUsers()),
			TLSConfig: http3.ConfigureTLSConfig(&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}),
		}
		go srv.Serve(pc)
		b.Cleanup(func() { srv.Close(); pc.Close() })
		h3GetLoop(b, pc.LocalAddr().String(), roots)
	})
	b.Run("ours", func(b *testing.B) {
		srv, err := server.Start(context.Background(), server.Options{HTTPAddr: "127.0.0.1:0", NoGRPC: true,
			H3: server.H3{Addr: "127.0.0.1:0"}, SeedUsers: users, SeedTodos: 10})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { srv.Close() })
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(srv.Cert().PEM)
		h3GetLoop(b, srv.H3Addr(), roots)
	})
}

func h3GetLoop(b *testing.B, addr string, roots *x509.CertPool) {
	tr := &http3.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, DisableCompression: true}
	b.Cleanup(func() { tr.Close() })
	c := &http.Client{Transport: tr}
	url := "https://" + addr + "/users/1"
	get := func() int {
		resp, err := c.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
		return int(n)
	}
	n := get() // the handshake, before the timer
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		get()
	}
	b.ReportMetric(float64(n), "body-bytes")
}

// benchCert is a self-signed ECDSA P-256 certificate for 127.0.0.1, as
// h3bare and serve make, and a pool trusting it.
func benchCert(b *testing.B) (tls.Certificate, *x509.CertPool) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		b.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	roots := x509.NewCertPool()
	roots.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, roots
}
