package main

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/quic-go/quic-go/http3"
)

// TestBarePair: the bare client's loops get 200s from the bare server over
// HTTP/3, none failing, and the reply is the user's JSON, as
// bench/h3-cpu.sh relies on.
func TestBarePair(t *testing.T) {
	list, err := seedUsers(10)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := selfSigned()
	if err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(list, cert)
	go srv.Serve(pc)
	t.Cleanup(func() { srv.Close(); pc.Close() })
	url := "https://" + pc.LocalAddr().String() + "/users/1"

	tr := &http3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableCompression: true}
	defer tr.Close()
	resp, err := (&http.Client{Transport: tr}).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || resp.Proto != "HTTP/3.0" {
		t.Fatalf("%s %d %q", resp.Proto, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if want := `{"id":1,`; len(body) < len(want) || string(body[:len(want)]) != want {
		t.Fatalf("body %q", body)
	}

	ok, bad, _ := load(url, 4, 2, 300*time.Millisecond, 0, nil)
	if ok == 0 || bad != 0 {
		t.Fatalf("requests %d, errors %d", ok, bad)
	}
	// -n: exactly that many, spread over the loops, whatever -d says.
	ok, bad, _ = load(url, 4, 2, time.Nanosecond, 37, nil)
	if ok != 37 || bad != 0 {
		t.Fatalf("-n 37: requests %d, errors %d", ok, bad)
	}
	// -trace: http3's frame events reach the count: every reply's body
	// in DATA payloads, a header block each way per request, no body
	// sent, and at least a HEADERS and a DATA frame header per reply.
	var fc frameCount
	ok, bad, _ = load(url, 4, 2, time.Nanosecond, 37, &fc)
	if ok != 37 || bad != 0 {
		t.Fatalf("-trace: requests %d, errors %d", ok, bad)
	}
	if got, want := fc.in.body.Load(), int64(37*len(body)); got != want {
		t.Errorf("-trace: body in %d, want %d", got, want)
	}
	if fc.out.body.Load() != 0 || fc.in.qpack.Load() < 37 || fc.out.qpack.Load() < 37 || fc.in.frames.Load() < 37*4 {
		t.Errorf("-trace: body out %d, QPACK in %d out %d, frames in %d", fc.out.body.Load(), fc.in.qpack.Load(), fc.out.qpack.Load(), fc.in.frames.Load())
	}
}

// TestGCScan: the SIGUSR1 line carries the collector's scan set; after a
// cycle every figure but the stacks' is above zero.
func TestGCScan(t *testing.T) {
	runtime.GC()
	var g, h, st, c uint64
	if n, err := fmt.Sscanf(gcScan(), "gc-scan globals %d heap %d stack %d cycles %d", &g, &h, &st, &c); n != 4 || err != nil {
		t.Fatalf("%q: %d fields, %v", gcScan(), n, err)
	}
	if g == 0 || h == 0 || c == 0 {
		t.Errorf("%q: a zero figure", gcScan())
	}
}
