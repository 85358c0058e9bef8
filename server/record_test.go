package server_test

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/load/replay/reqlog"
	"github.com/wirebench/wirebench/server"
)

// TestRecordRedactsPathSecretsOnEveryTransport: serve --record writes a
// credential carried in a URL's path REDACTED as one in its query,
// whichever transport brought the request: HTTP/1.1 and h2c on the REST
// port, HTTP/1.1 and h2 over TLS, HTTP/3. Before, a reset token, an API
// key naming itself in the path, the request's own bearer token and a
// Referer's reset link were written in clear.
func TestRecordRedactsPathSecretsOnEveryTransport(t *testing.T) {
	const (
		resetTok = "3f9a7c0e5b1d4a2c8e6f0b9d7a5c3e1f"
		liveKey  = "sk_live_51HqLyjWDarjtT1zdp7dc"
		bearer   = "tok-3f9a1c77e2"
		queryKey = "key-5c1d8e0f42"
		refTok   = "8c1f2b7a0d3e4f5a9b6c7d8e9f0a1b2c"
	)
	var log bytes.Buffer
	w := reqlog.NewWriter(&log, reqlog.Options{})
	srv := startH3(t, server.Options{SeedUsers: 3, HTTPSAddr: "127.0.0.1:0", Record: w})
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(srv.Cert().PEM)
	var h2c http.Protocols
	h2c.SetUnencryptedHTTP2(true)
	clients := []struct {
		name, base string
		c          *http.Client
		proto      int
	}{
		{"h1", "http://" + srv.HTTPAddr(), &http.Client{Transport: &http.Transport{}}, 1},
		{"h2c", "http://" + srv.HTTPAddr(), &http.Client{Transport: &http.Transport{Protocols: &h2c}}, 2},
		{"https h1", "https://" + srv.HTTPSAddr(), &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}, 1},
		{"https h2", "https://" + srv.HTTPSAddr(), &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}, 2},
		{"h3", "https://" + srv.H3Addr(), h3Client(t, srv), 3},
	}
	targets := map[string]string{
		"/reset/" + resetTok:           "/reset/REDACTED",
		"/api/v1/keys/" + liveKey:      "/api/v1/keys/REDACTED",
		"/users/" + bearer + "/todos":  "/users/REDACTED/todos",
		"/users/1?api_key=" + queryKey: "/users/1?api_key=REDACTED",
		"/users/2":                     "/users/2",
	}
	for _, c := range clients {
		for target := range targets {
			req, _ := http.NewRequest("GET", c.base+target, nil)
			req.Header.Set("Authorization", "Bearer "+bearer)
			req.Header.Set("Referer", "https://example.com/confirm/"+refTok)
			resp, err := c.c.Do(req)
			if err != nil {
				t.Fatalf("%s %s: %v", c.name, target, err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.ProtoMajor != c.proto {
				t.Fatalf("%s: answered over %s", c.name, resp.Proto)
			}
		}
	}
	srv.Close()
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	raw := log.String()
	for _, s := range []string{resetTok, liveKey, bearer, queryKey, refTok} {
		if strings.Contains(raw, s) {
			t.Errorf("the recording holds %q:\n%s", s, raw)
		}
	}
	reqs, err := reqlog.ReadAll(strings.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, q := range reqs {
		seen[q.Target]++
		for _, h := range q.Header {
			if h[0] == "Referer" && h[1] != "https://example.com/confirm/REDACTED" {
				t.Errorf("%s: Referer %q", q.Target, h[1])
			}
		}
	}
	for _, want := range targets {
		if seen[want] != len(clients) {
			t.Errorf("%s recorded %d times, want once per transport (%d): %v", want, seen[want], len(clients), seen)
		}
	}
}
