package server

import (
	"cmp"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"time"
)

// The faces over TLS: HTTP/3 (h3.go) and HTTPS (HTTP/1.1 and h2 on TCP),
// both serving the REST port's routing table with one certificate, so
// that h1, h2 and h3 are compared over TLS alike (docs/http3.md).

// TLS names the certificate of the TLS faces: a PEM certificate and key;
// both empty, a self-signed ECDSA P-256 certificate is generated at start
// (Server.Cert says which).
type TLS struct {
	CertFile, KeyFile string
}

// Cert says which certificate the TLS faces present, so that a client can
// pin it: SHA256 is the certificate's fingerprint (hex, as openssl x509
// -fingerprint -sha256 prints it), SPKI the base64 SHA-256 of its public
// key (chromium's --ignore-certificate-errors-spki-list).
type Cert struct {
	SHA256, SPKI string
	Generated    bool
	PEM          []byte // the certificate, so a client can trust it (--cacert)
}

// tlsFaces are the running TLS faces (either may be nil).
type tlsFaces struct {
	cert    Cert
	h3      *h3Face
	https   *http.Server
	httpsLn net.Listener
}

// newTLSFaces loads the certificate and opens the listeners of o's TLS
// faces; nil when there are none.
func newTLSFaces(o Options, t Timeouts, listen func(network, address string) (net.Listener, error), shares *replyShares) (*tlsFaces, error) {
	if o.H3.Addr == "" && o.HTTPSAddr == "" {
		return nil, nil
	}
	cert, info, err := certificate(o.TLS, cmp.Or(o.HTTPSAddr, o.H3.Addr))
	if err != nil {
		return nil, err
	}
	f := &tlsFaces{cert: info}
	if o.H3.Addr != "" {
		if f.h3, err = newH3(o.H3, cert, t, shares); err != nil {
			return nil, err
		}
	}
	if o.HTTPSAddr != "" {
		if f.httpsLn, err = listen("tcp", o.HTTPSAddr); err != nil {
			f.close()
			return nil, fmt.Errorf("server: HTTPS listen: %w", err)
		}
		var protos http.Protocols
		protos.SetHTTP1(true)
		protos.SetHTTP2(true)
		f.https = newHTTPServer(nil, &protos, t, shares) // net/http's own timeouts: the watchdog reads plain text
		f.https.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	return f, nil
}

// wrap adds the HTTP/3 counters to mux's /metrics.
func (f *tlsFaces) wrap(mux http.Handler) http.Handler {
	if f.h3 == nil {
		return mux
	}
	return f.h3.withMetrics(mux)
}

// serve starts the faces on mux, their failures reported through l.
func (f *tlsFaces) serve(l *life, mux http.Handler, t Timeouts) {
	if f.h3 != nil {
		go l.serve("HTTP/3", func() error { return f.h3.serve(mux, t) })
	}
	if f.https != nil {
		h := mux
		if f.h3 != nil {
			// Alt-Svc: a browser or client that speaks HTTP/3 moves there.
			alt := fmt.Sprintf(`h3=":%d"; ma=86400`, f.h3.pc.LocalAddr().(*net.UDPAddr).Port)
			h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Alt-Svc", alt)
				mux.ServeHTTP(w, r)
			})
		}
		f.https.Handler = h
		go l.serve("HTTPS", func() error { return f.https.ServeTLS(f.httpsLn, "", "") })
	}
}

func (f *tlsFaces) close() error {
	var errs []error
	if f.h3 != nil {
		errs = append(errs, f.h3.close())
	}
	if f.https != nil {
		errs = append(errs, f.https.Close())
	}
	if f.httpsLn != nil {
		f.httpsLn.Close()
	}
	return errors.Join(errs...)
}

func (f *tlsFaces) shutdown(ctx context.Context) error {
	var errs []error
	if f.h3 != nil {
		errs = append(errs, f.h3.shutdown(ctx))
	}
	if f.https != nil {
		errs = append(errs, f.https.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

// H3Addr is the HTTP/3 listener's UDP address ("" when off).
func (s *Server) H3Addr() string {
	if s.tls == nil || s.tls.h3 == nil {
		return ""
	}
	return s.tls.h3.pc.LocalAddr().String()
}

// HTTPSAddr is the HTTPS listener's address ("" when off).
func (s *Server) HTTPSAddr() string {
	if s.tls == nil {
		return ""
	}
	return addrOf(s.tls.httpsLn)
}

// Cert is the TLS faces' certificate (zero when there are none).
func (s *Server) Cert() Cert {
	if s.tls == nil {
		return Cert{}
	}
	return s.tls.cert
}

// certificate loads o's certificate or generates one for addr's host.
func certificate(o TLS, addr string) (tls.Certificate, Cert, error) {
	var cert tls.Certificate
	var err error
	generated := o.CertFile == "" && o.KeyFile == ""
	switch {
	case generated:
		cert, err = selfSigned(addr)
	case o.CertFile == "" || o.KeyFile == "":
		err = errors.New("want both a certificate and a key file, or neither")
	default:
		cert, err = tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
	}
	if err != nil {
		return cert, Cert{}, fmt.Errorf("server: TLS certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return cert, Cert{}, fmt.Errorf("server: TLS certificate: %w", err)
	}
	fp := sha256.Sum256(leaf.Raw)
	spki := sha256.Sum256(leaf.RawSubjectPublicKeyInfo)
	return cert, Cert{
		SHA256:    colonHex(fp[:]),
		SPKI:      base64.StdEncoding.EncodeToString(spki[:]),
		Generated: generated,
		PEM:       pemCert(leaf.Raw),
	}, nil
}

// selfSigned makes an ECDSA P-256 certificate for localhost, the
// loopback addresses and addr's host, valid for a year from an hour ago
// (clock skew between client and server).
func selfSigned(addr string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return tls.Certificate{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "wirebench serve (self-signed)"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(365 * 24 * time.Hour),
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		// Its own CA, so that --cacert with this certificate verifies.
		IsCA:                  true,
		BasicConstraintsValid: true,
	}
	if host, _, err := net.SplitHostPort(addr); err == nil && host != "" {
		if ip := net.ParseIP(host); ip != nil {
			if !ip.IsLoopback() && !ip.IsUnspecified() {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			}
		} else if host != "localhost" {
			tmpl.DNSNames = append(tmpl.DNSNames, host)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

func colonHex(b []byte) string {
	h := strings.ToUpper(hex.EncodeToString(b))
	var sb strings.Builder
	for i := 0; i < len(h); i += 2 {
		if i > 0 {
			sb.WriteByte(':')
		}
		sb.WriteString(h[i : i+2])
	}
	return sb.String()
}

func pemCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// appendMetrics serves next's /metrics with more appended, as kvhttp
// appends the store's (metrics are small; Accept-Encoding is dropped so
// the text can be extended).
func appendMetrics(w http.ResponseWriter, r *http.Request, next http.Handler, more func([]byte) []byte) {
	r2 := r.Clone(r.Context())
	r2.Header.Del("Accept-Encoding")
	rec := httptest.NewRecorder()
	next.ServeHTTP(rec, r2)
	for k, v := range rec.Header() {
		if k != "Content-Length" {
			w.Header()[k] = v
		}
	}
	body := rec.Body.Bytes()
	if rec.Code == http.StatusOK {
		body = more(body)
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(rec.Code)
	w.Write(body)
}
