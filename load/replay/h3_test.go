package replay

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/quic-go/quic-go/http3"

	"github.com/wirebench/wirebench/load/conn"
)

// h3Server serves s's handler over HTTP/3 (quic-go) on 127.0.0.1:0 with
// a self-signed certificate, and returns its https:// URL (the UDP port)
// and the certificate's PEM file.
func h3Server(t *testing.T, s *seen) (url, caFile string) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	caFile = filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http3.Server{
		TLSConfig: http3.ConfigureTLSConfig(&tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}),
		Handler:   s.handler(),
	}
	done := make(chan struct{})
	go func() { srv.Serve(udp); close(done) }()
	t.Cleanup(func() { srv.Close(); udp.Close(); <-done })
	return "https://" + udp.LocalAddr().String(), caFile
}

// TestReplayH3: --transport h3 sends the whole recording over HTTP/3 to
// the target's UDP port, verified against the CA file.
func TestReplayH3(t *testing.T) {
	s := newSeen()
	url, ca := h3Server(t, s)
	replayAndCheck(t, s, Options{Options: conn.Options{URL: url, Transport: conn.H3, CAFile: ca, Connections: 2}}, "HTTP/3.0")
}
