package grpcanytest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
)

// TLSFiles are a test's certificates: the server's for 127.0.0.1,
// self-signed (CA is its PEM file, for --cacert), and a client's
// (ClientCert, ClientKey: PEM files, for --cert and --key) that Server
// requires when NewTLS was asked to.
type TLSFiles struct {
	CA, ClientCert, ClientKey string
	// Server is the server's configuration.
	Server *tls.Config
}

// NewTLS makes the certificates in a temporary directory.
func NewTLS(t testing.TB, requireClient bool) TLSFiles {
	t.Helper()
	dir := t.TempDir()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "grpcanytest"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	f := TLSFiles{CA: testkit.WritePEM(t, dir, "ca.pem", &pem.Block{Type: "CERTIFICATE", Bytes: der})}
	f.Server = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: k}}}
	ccert, ckey := testkit.ClientCert(t)
	f.ClientCert = testkit.WritePEM(t, dir, "client.pem", &pem.Block{Type: "CERTIFICATE", Bytes: ccert})
	f.ClientKey = testkit.WritePEM(t, dir, "client-key.pem", &pem.Block{Type: "EC PRIVATE KEY", Bytes: ckey})
	if requireClient {
		c, err := x509.ParseCertificate(ccert)
		if err != nil {
			t.Fatal(err)
		}
		f.Server.ClientCAs = x509.NewCertPool()
		f.Server.ClientCAs.AddCert(c)
		f.Server.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return f
}
