package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/results"
)

// TestPeerH3Auto: `load --transport auto` against `serve --https
// --http3`, given the TCP TLS address, makes its first request there and
// follows the Alt-Svc to the UDP port: the server's HTTP/3 counter holds
// every request of the run, and the summary and the result say h3 and
// why; raw mode and a reference scenario alike.
func TestPeerH3Auto(t *testing.T) {
	testkit.NeedPeers(t) // starts the server: CI's peer step (docs/testing.md)
	bin := testkit.Binary(t)
	defer loadLock(t)()
	srv := startServeH3(t, bin, "--https", "127.0.0.1:0")
	if srv.https == "" {
		t.Fatal("serve printed no https address")
	}
	for _, tc := range []struct {
		args  []string
		extra int64 // the scenario's dataset snapshot: one request on a connection of its own
	}{
		{[]string{"-c", "4", "--conns", "2", "-n", "300", "--cacert", srv.cert, "https://" + srv.https + "/users/1"}, 0},
		{[]string{"--scenario", "get", "-c", "2", "--conns", "1", "-n", "100", "-k", "https://" + srv.https}, 1},
	} {
		args := tc.args
		req0, conn0 := srv.counters(t)
		f := filepath.Join(t.TempDir(), "result.json")
		argv := append([]string{"load", "--transport", "auto", "--out", f}, args...)
		out, err := exec.Command(bin, argv...).CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", argv, err, out)
		}
		if !strings.Contains(string(out), "transport h3 (--transport auto: ") || !strings.Contains(string(out), "Alt-Svc") {
			t.Errorf("%v: the summary does not say h3 by Alt-Svc:\n%s", argv, out)
		}
		rf, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		res, err := results.ReadLoad(rf)
		rf.Close()
		if err != nil {
			t.Fatal(err)
		}
		req, conn := srv.counters(t)
		if res.Failed != 0 || res.Requests == 0 || req-req0 != res.Requests+tc.extra ||
			res.Conn == nil || conn-conn0 != int64(len(res.Conn.Handshakes))+tc.extra {
			t.Errorf("%v: client %d requests (failures %v); server counted %d over h3 on %d connections",
				argv, res.Requests, res.Failures, req-req0, conn-conn0)
		}
	}
}
