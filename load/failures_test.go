package load

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/h3"
	"github.com/wirebench/wirebench/results"
)

// TestRunStopsAtDeadTarget: a run against a port with nothing listening
// stops soon after it starts, with the cause, rather than send failing
// requests for its whole -d (108k/s before); a target that answers, if
// only 403, runs its -d.
func TestRunStopsAtDeadTarget(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/"
	ln.Close()
	forbidden := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusForbidden) }))
	t.Cleanup(forbidden.Close)
	for name, o := range map[string]Options{
		"event loops":        {Options: results.Options{Concurrency: 10, Duration: 20 * time.Second, EventLoop: true}},
		"closed, goroutines": {Options: results.Options{Concurrency: 10, Duration: 20 * time.Second}},
		"open loop":          {Options: results.Options{Concurrency: 10, Duration: 20 * time.Second, Rate: 100, Open: true}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			res := runRaw(t, o, RawOptions{Options: conn.Options{URL: dead, Timeout: 5 * time.Second}, Method: "GET"})
			if res.Stop == nil || !strings.Contains(res.Stop.Cause, "failed (connection refused) and none succeeded") ||
				res.Measured() > 10*time.Second || res.Failed != res.Requests || res.Requests < deadMany {
				t.Errorf("stop %+v after %v, %d of %d failed", res.Stop, res.Measured(), res.Failed, res.Requests)
			}
			if len(res.Warnings) == 0 || !strings.Contains(strings.Join(res.Warnings, " "), "the run stops rather than keep sending") {
				t.Errorf("warnings %q", res.Warnings)
			}
		})
	}
	t.Run("403 is an answer", func(t *testing.T) {
		t.Parallel()
		res := runRaw(t, Options{Options: results.Options{Concurrency: 2, Duration: 400 * time.Millisecond}}, RawOptions{Options: conn.Options{URL: forbidden.URL, Timeout: 5 * time.Second}, Method: "GET"})
		if res.Stop != nil || res.Measured() < 400*time.Millisecond {
			t.Errorf("stop %+v after %v", res.Stop, res.Measured())
		}
	})
}

// TestH3NoHandshake: over HTTP/3 at a UDP port where nothing answers, the
// run fails with "no QUIC handshake completed" after the timeout; before,
// it ran -d plus the graceful stop and reported "requests 0, failed 0".
func TestH3NoHandshake(t *testing.T) {
	t.Parallel()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := pc.LocalAddr().String()
	pc.Close()
	sc, err := NewRaw(RawOptions{Options: conn.Options{URL: "https://" + addr + "/", Transport: conn.H3, Insecure: true, Timeout: 300 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), Options{Options: results.Options{Concurrency: 2, Duration: 5 * time.Second, Timeout: 300 * time.Millisecond}}, sc)
	if !errors.Is(err, h3.ErrNoHandshake) {
		t.Errorf("err %v, want no QUIC handshake completed", err)
	}
}
