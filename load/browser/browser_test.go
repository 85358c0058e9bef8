package browser

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/internal/loadtest"
	"github.com/wirebench/wirebench/results"
)

// needChromium skips outside CI when there is no browser, and fails in CI.
func needChromium(t *testing.T) {
	t.Helper()
	if _, err := FindChromium(""); err != nil {
		if !testkit.InCI() {
			t.Skipf("%v: the in-browser test needs chromium (apt-get install chromium)", err)
		}
		t.Fatalf("CI: %v", err)
	}
}

// TestBrowserQuick runs each page kind for one batch in headless chromium
// against the real server: every call must succeed and its in-page latency
// replace the batch's.
func TestBrowserQuick(t *testing.T) {
	testkit.NeedPeers(t) // slow: CI's peer step (docs/testing.md)
	needChromium(t)
	if testing.Short() {
		t.Skip("starts chromium (a few seconds)")
	}
	rest, _ := loadtest.StartServer(t, 20)
	for _, kind := range browserTestKinds {
		t.Run(kind, func(t *testing.T) {
			sc, err := New(Options{Kind: kind, URL: rest, Batch: 20, Timeout: 30 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			res, err := load.Run(context.Background(), load.Options{Options: results.Options{Concurrency: 1, Requests: 2}}, sc)
			if err != nil {
				t.Fatal(err)
			}
			if res.Requests != 40 || res.Failed != 0 || res.Latency.Count() != 40 || res.Stream == nil || !res.Stream.InBrowser {
				t.Fatalf("requests %d failed %d (%v) latencies %d", res.Requests, res.Failed, res.Failures, res.Latency.Count())
			}
			// a loopback call takes more than 10 µs and less than the
			// timeout in any browser
			if p50 := res.Latency.Quantile(0.5); p50 < 10*time.Microsecond || p50 > 30*time.Second {
				t.Errorf("p50 %v", p50)
			}
			if res.CPU.User+res.CPU.System <= 0 {
				t.Errorf("no client CPU: %+v", res.CPU)
			}
			t.Logf("%s: p50 %v p99 %v, %v", kind, res.Latency.Quantile(0.5), res.Latency.Quantile(0.99), res.Warnings)
		})
	}
}

// browserTestKinds cover every transport of the page (fetch, Connect,
// gRPC-Web, the WebSocket tunnel) and streaming, at about 3 s of chromium
// start each; the other two kinds share their code paths.
var browserTestKinds = []string{"fetch-json", "grpc-web", "ws-tunnel", "connect-stream"}

func TestBrowserOptionsRefused(t *testing.T) {
	if _, err := New(Options{Kind: "nope", URL: "http://127.0.0.1:1"}); !errors.Is(err, load.ErrOptions) {
		t.Errorf("unknown kind: %v", err)
	}
	if _, err := New(Options{Kind: "connect", URL: "ws://127.0.0.1:1"}); !errors.Is(err, load.ErrOptions) {
		t.Errorf("bad URL: %v", err)
	}
	if _, err := FindChromium("/nonexistent/chromium"); err == nil {
		t.Error("found a browser that is not there")
	}
}
