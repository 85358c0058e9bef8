package server_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/wirebench/wirebench/httpapi"
	"github.com/wirebench/wirebench/server"
)

// startH3 starts the reference server with HTTP/3 on 127.0.0.1:0 (UDP).
func startH3(t *testing.T, o server.Options) *server.Server {
	t.Helper()
	o.HTTPAddr, o.NoGRPC, o.H3.Addr = "127.0.0.1:0", true, "127.0.0.1:0"
	srv, err := server.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// h3Client trusts only the server's own certificate (Cert.PEM).
func h3Client(t *testing.T, srv *server.Server) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(srv.Cert().PEM) {
		t.Fatal("no certificate in Cert().PEM")
	}
	tr := &http3.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	t.Cleanup(func() { tr.Close() })
	return &http.Client{Transport: tr}
}

// The REST API, its streams and its errors answer over HTTP/3 as over TCP;
// the generated certificate verifies for 127.0.0.1 and its printed
// fingerprints are the presented certificate's.
func TestH3ServesTheRESTAPI(t *testing.T) {
	srv := startH3(t, server.Options{SeedUsers: 3})
	c := h3Client(t, srv)
	base := "https://" + srv.H3Addr()
	for _, tc := range []struct {
		method, path, ctype, accept, body string
		code                              int
		want                              string
	}{
		{"GET", "/users/1", "", "application/json", "", 200, `"id":1,`},
		{"GET", "/users", "", "application/x-ndjson", "", 200, "\n{\"id\":2,"},
		{"POST", "/echo", "application/json", "", `{"first_message":"a","second_message":"b"}`, 200, `"message":"ab"`},
		{"GET", "/users/99", "", "application/json", "", 404, `"error"`},
		{"POST", "/users", "application/json", "", `{"name":`, 400, `"error"`},
		{"PUT", "/kv/k", "application/octet-stream", "", "v", 204, ""},
		{"GET", "/kv/k", "", "", "", 200, "v"},
	} {
		req, _ := http.NewRequest(tc.method, base+tc.path, strings.NewReader(tc.body))
		if tc.ctype != "" {
			req.Header.Set("Content-Type", tc.ctype)
		}
		if tc.accept != "" {
			req.Header.Set("Accept", tc.accept)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", tc.method, tc.path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.Proto != "HTTP/3.0" || resp.StatusCode != tc.code || !strings.Contains(string(b), tc.want) {
			t.Errorf("%s %s: %s %d %q, want HTTP/3.0 %d with %q", tc.method, tc.path, resp.Proto, resp.StatusCode, b, tc.code, tc.want)
		}
		if tc.path == "/users/1" {
			leaf := resp.TLS.PeerCertificates[0]
			fp := sha256.Sum256(leaf.Raw)
			spki := sha256.Sum256(leaf.RawSubjectPublicKeyInfo)
			if got := srv.Cert(); !strings.EqualFold(strings.ReplaceAll(got.SHA256, ":", ""), fmt.Sprintf("%x", fp)) || got.SPKI != base64.StdEncoding.EncodeToString(spki[:]) {
				t.Errorf("Cert %+v is not the presented certificate's", got)
			}
		}
	}
	// 7 requests over HTTP/3, on one connection; none over TCP yet.
	if got := h3Metric(t, srv, "wirebench_h3_requests_total"); got != 7 {
		t.Errorf("wirebench_h3_requests_total %d, want 7", got)
	}
	if got := h3Metric(t, srv, "wirebench_h3_connections_total"); got != 1 {
		t.Errorf("wirebench_h3_connections_total %d, want 1", got)
	}
}

// The SSE stream answers over HTTP/3 (through streamapi's flushes and
// deadlines, which quic-go's response writer supports).
func TestH3ServerSentEvents(t *testing.T) {
	srv := startH3(t, server.Options{SeedUsers: 2})
	c := h3Client(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "https://"+srv.H3Addr()+"/users/events", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data:") {
			return
		}
	}
	t.Fatalf("no event: %v", sc.Err())
}

// The limits of docs/limits.md hold over HTTP/3: --max-body (413),
// --h3-max-streams (QUIC refuses the stream past it), --h3-idle-timeout
// (the server closes a silent connection; the client's own idle timeout
// is 30 s).
func TestH3Limits(t *testing.T) {
	srv := startH3(t, server.Options{
		HTTP: httpapi.Options{MaxBody: 100},
		H3:   server.H3{MaxStreams: 1, IdleTimeout: 300 * time.Millisecond},
	})
	c := h3Client(t, srv)
	resp, err := c.Post("https://"+srv.H3Addr()+"/echo", "application/json", strings.NewReader(`{"first_message":"`+strings.Repeat("a", 200)+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a 200-byte body past --max-body 100: %d, want 413", resp.StatusCode)
	}

	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(srv.Cert().PEM)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := quic.DialAddr(ctx, srv.H3Addr(), &tls.Config{RootCAs: pool, NextProtos: []string{http3.NextProtoH3}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.OpenStream(); err != nil {
		t.Fatalf("first stream: %v", err)
	}
	if _, err := conn.OpenStream(); !errors.Is(err, &quic.StreamLimitReachedError{}) {
		t.Errorf("second stream at --h3-max-streams 1: %v, want StreamLimitReachedError", err)
	}
	select { // generous: only shows the server's 300 ms applies, not the client's 30 s
	case <-conn.Context().Done():
	case <-ctx.Done():
		t.Error("a silent connection still open after 10 s at --h3-idle-timeout 300ms")
	}
}

// HTTP/3 needs the net/http engine and HTTP on; a half-given certificate
// is refused.
func TestH3Refused(t *testing.T) {
	for name, o := range map[string]server.Options{
		"fasthttp":        {Engine: server.EngineFastHTTP},
		"no http":         {NoHTTP: true},
		"cert alone":      {TLS: server.TLS{CertFile: "x.pem"}},
		"https, fasthttp": {Engine: server.EngineFastHTTP, HTTPSAddr: "127.0.0.1:0"},
	} {
		o.HTTPAddr, o.NoGRPC = "127.0.0.1:0", true
		if o.H3.Addr == "" && o.HTTPSAddr == "" {
			o.H3.Addr = "127.0.0.1:0"
		}
		srv, err := server.Start(context.Background(), o)
		if err == nil {
			srv.Close()
			t.Errorf("%s: started", name)
		}
	}
}

// --https serves the same routes over HTTP/1.1 and h2 on TLS with the
// same certificate, and advertises the HTTP/3 port (Alt-Svc).
func TestHTTPSBesideH3(t *testing.T) {
	srv := startH3(t, server.Options{SeedUsers: 3, HTTPSAddr: "127.0.0.1:0"})
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(srv.Cert().PEM)
	_, port, _ := strings.Cut(srv.H3Addr(), ":")
	for _, h2 := range []bool{false, true} {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: h2}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr}).Get("https://" + srv.HTTPSAddr() + "/users/1")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := map[bool]int{false: 1, true: 2}[h2]; resp.StatusCode != 200 || resp.ProtoMajor != want || !strings.Contains(string(b), `"id":1,`) {
			t.Errorf("%s %d %q, want HTTP/%d 200", resp.Proto, resp.StatusCode, b, want)
		}
		if got, want := resp.Header.Get("Alt-Svc"), `h3=":`+port+`"; ma=86400`; got != want {
			t.Errorf("Alt-Svc %q, want %q", got, want)
		}
	}
	if got := h3Metric(t, srv, "wirebench_h3_requests_total"); got != 0 {
		t.Errorf("wirebench_h3_requests_total %d after HTTPS requests only", got)
	}
}

// h3Metric reads one unlabelled sample from /metrics over TCP.
func h3Metric(t *testing.T, srv *server.Server, name string) int64 {
	t.Helper()
	code, body := get(t, "GET", "http://"+srv.HTTPAddr()+"/metrics", "", "", "")
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	for line := range strings.Lines(body) {
		var v int64
		if n, _ := fmt.Sscanf(line, name+" %d", &v); n == 1 {
			return v
		}
	}
	t.Fatalf("/metrics has no %s:\n%s", name, body)
	return 0
}
