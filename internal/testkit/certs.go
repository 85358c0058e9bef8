package testkit

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ClientCert is a self-signed client certificate and its EC key, both
// DER, for servers that require one (trust it by adding the certificate
// to the server's ClientCAs).
func ClientCert(t testing.TB) (cert, key []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "wirebench client"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature,
	}
	if cert, err = x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k); err != nil {
		t.Fatal(err)
	}
	if key, err = x509.MarshalECPrivateKey(k); err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// WritePEM writes blocks to the file name in dir (mode 0600) and returns
// its path.
func WritePEM(t testing.TB, dir, name string, blocks ...*pem.Block) string {
	t.Helper()
	var b strings.Builder
	for _, bl := range blocks {
		if err := pem.Encode(&b, bl); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
