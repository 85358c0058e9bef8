package export

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/results"
)

// TestStartLive: no sink is no export; a bad URL or interval is refused
// before anything starts; a scrape endpoint serves the run offered, and
// Finish closes it and says what was sent.
func TestStartLive(t *testing.T) {
	if l, err := StartLive(LiveOptions{}); l != nil || err != nil {
		t.Fatalf("no sinks: %v, %v; want nil, nil", l, err)
	}
	if _, err := StartLive(LiveOptions{RemoteWrite: "127.0.0.1:9090"}); !errors.Is(err, ErrExport) {
		t.Errorf("remote write without a scheme: %v, want ErrExport", err)
	}
	if _, err := StartLive(LiveOptions{OTLP: "http://x/v1/metrics", Every: time.Millisecond}); !errors.Is(err, ErrLiveOptions) {
		t.Errorf("1ms interval: %v, want ErrLiveOptions", err)
	}
	l, err := StartLive(LiveOptions{MetricsAddr: "127.0.0.1:0", RunID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	if l.Every != DefaultInterval || !strings.Contains(l.Started(), `run="r1"`) {
		t.Errorf("every %v, started %q", l.Every, l.Started())
	}
	res := &results.Load{Scenario: "raw", Requests: 7}
	l.Offer(res)
	var body string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && !strings.Contains(body, "wirebench_"); time.Sleep(10 * time.Millisecond) {
		resp, err := http.Get(l.MetricsURL())
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body = string(b)
	}
	if !strings.Contains(body, `run="r1"`) {
		t.Fatalf("scrape of %s: %q, want the run's series", l.MetricsURL(), body)
	}
	if line := l.Finish(context.Background(), res); !strings.Contains(line, "scrape endpoint") || !strings.Contains(line, "0 failed") {
		t.Errorf("finish: %q", line)
	}
	if _, err := http.Get(l.MetricsURL()); err == nil {
		t.Error("the scrape endpoint still answers after Finish")
	}
}
