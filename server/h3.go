package server

import (
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
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/wirebench/wirebench/promtext"
)

// H3 configures the HTTP/3 listener: the REST port's whole routing table
// (routes.go) served over QUIC by quic-go's http3 server. Addr "" serves
// no HTTP/3.
type H3 struct {
	Addr string
	// CertFile and KeyFile are a PEM certificate and key; both empty: a
	// self-signed ECDSA P-256 certificate is generated at start (its
	// fingerprints are in Server.H3Cert).
	CertFile, KeyFile string
	// MaxStreams bounds the concurrent request streams of one QUIC
	// connection (QUIC's MAX_STREAMS); 0 is DefaultH3MaxStreams.
	MaxStreams int
	// IdleTimeout closes a QUIC connection with no packet for this long;
	// 0 is Timeouts.Idle.
	IdleTimeout time.Duration
}

// DefaultH3MaxStreams is quic-go's own default (and h2c's, DefaultTimeouts).
const DefaultH3MaxStreams = 100

// H3Cert says which certificate the HTTP/3 listener presents, so that a
// client can pin it: SHA256 is the certificate's fingerprint (hex, as
// openssl x509 -fingerprint -sha256 prints it), SPKI the base64 SHA-256
// of its public key (chromium's --ignore-certificate-errors-spki-list).
type H3Cert struct {
	SHA256, SPKI string
	Generated    bool
	PEM          []byte // the certificate, so a client can trust it (--cacert)
}

// h3Face is the running HTTP/3 listener and its counters.
type h3Face struct {
	srv  *http3.Server
	pc   net.PacketConn
	cert H3Cert
	// requests counts requests answered over HTTP/3 (every route); conns
	// the QUIC connections that completed a handshake.
	requests, conns atomic.Uint64
}

// newH3 opens the UDP socket and the TLS configuration; serve starts it.
func newH3(o H3, t Timeouts) (*h3Face, error) {
	cert, info, err := h3Certificate(o)
	if err != nil {
		return nil, err
	}
	if o.MaxStreams <= 0 {
		o.MaxStreams = DefaultH3MaxStreams
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = t.Idle
	}
	pc, err := net.ListenPacket("udp", o.Addr)
	if err != nil {
		return nil, fmt.Errorf("server: HTTP/3 listen: %w", err)
	}
	f := &h3Face{pc: pc, cert: info}
	f.srv = &http3.Server{
		TLSConfig: http3.ConfigureTLSConfig(&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}),
		QUICConfig: &quic.Config{
			MaxIncomingStreams:   int64(o.MaxStreams),
			MaxIdleTimeout:       o.IdleTimeout,
			HandshakeIdleTimeout: t.ReadHeader,
			Allow0RTT:            false, // a replayable request is not what a benchmark of the API measures
		},
		IdleTimeout:    o.IdleTimeout,
		MaxHeaderBytes: maxHeaderBytes,
		ConnContext: func(ctx context.Context, _ *quic.Conn) context.Context {
			f.conns.Add(1)
			return ctx
		},
	}
	return f, nil
}

// serve serves h (the REST port's routing table) with the per-request
// deadlines of t, until Close or Shutdown.
func (f *h3Face) serve(h http.Handler, t Timeouts) error {
	f.srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// As on TCP (netphases.go): a request's body within Read, its
		// reply within Write; the streams extend both (streamapi).
		now := time.Now()
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(now.Add(t.Read))
		_ = rc.SetWriteDeadline(now.Add(t.Write))
		h.ServeHTTP(w, r)
		f.requests.Add(1)
	})
	return f.srv.Serve(f.pc)
}

func (f *h3Face) close() error {
	return errors.Join(f.srv.Close(), f.pc.Close())
}

func (f *h3Face) shutdown(ctx context.Context) error {
	return errors.Join(f.srv.Shutdown(ctx), f.pc.Close())
}

// withMetrics appends the HTTP/3 counters to next's /metrics (on every
// listener: a scrape over TCP sees them too).
func (f *h3Face) withMetrics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			next.ServeHTTP(w, r)
			return
		}
		appendMetrics(w, r, next, f.appendCounters)
	})
}

func (f *h3Face) appendCounters(b []byte) []byte {
	const req, conn = "wirebench_h3_requests_total", "wirebench_h3_connections_total"
	b = promtext.AppendHeader(b, req, "Requests answered on the HTTP/3 listener, every route.", promtext.Counter)
	b = promtext.AppendUint(b, req, f.requests.Load())
	b = promtext.AppendHeader(b, conn, "QUIC connections accepted by the HTTP/3 listener (handshake complete).", promtext.Counter)
	return promtext.AppendUint(b, conn, f.conns.Load())
}

// H3Addr is the HTTP/3 listener's UDP address ("" when off).
func (s *Server) H3Addr() string {
	if s.h3 == nil {
		return ""
	}
	return s.h3.pc.LocalAddr().String()
}

// H3Cert is the HTTP/3 listener's certificate (zero when off).
func (s *Server) H3Cert() H3Cert {
	if s.h3 == nil {
		return H3Cert{}
	}
	return s.h3.cert
}

// H3Requests is the requests answered over HTTP/3 so far.
func (s *Server) H3Requests() uint64 {
	if s.h3 == nil {
		return 0
	}
	return s.h3.requests.Load()
}

// h3Certificate loads o's certificate or generates one.
func h3Certificate(o H3) (tls.Certificate, H3Cert, error) {
	var cert tls.Certificate
	var err error
	generated := o.CertFile == "" && o.KeyFile == ""
	switch {
	case generated:
		cert, err = selfSigned(o.Addr)
	case o.CertFile == "" || o.KeyFile == "":
		err = errors.New("want both a certificate and a key file, or neither")
	default:
		cert, err = tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
	}
	if err != nil {
		return cert, H3Cert{}, fmt.Errorf("server: HTTP/3 certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return cert, H3Cert{}, fmt.Errorf("server: HTTP/3 certificate: %w", err)
	}
	fp := sha256.Sum256(leaf.Raw)
	spki := sha256.Sum256(leaf.RawSubjectPublicKeyInfo)
	return cert, H3Cert{
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
