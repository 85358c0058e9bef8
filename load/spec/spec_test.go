package spec

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/replay"
	"github.com/wirebench/wirebench/load/scenario"
	"github.com/wirebench/wirebench/results"
)

func made(t *testing.T, c Client) *Made {
	t.Helper()
	m, err := New(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// TestNoClient: options that name no client are refused as options.
func TestNoClient(t *testing.T) {
	if !(Client{}).Empty() {
		t.Error("the zero Client is not empty")
	}
	if _, err := New(context.Background(), Client{}); !errors.Is(err, load.ErrOptions) {
		t.Errorf("New(Client{}) = %v, want load.ErrOptions", err)
	}
}

// TestRawConfig: raw mode records its options and its body's size, and
// keeps the engine's options as given.
func TestRawConfig(t *testing.T) {
	var o load.Options
	o.Duration, o.Concurrency = 3*time.Second, 7
	m := made(t, Client{Options: o, Raw: &load.RawOptions{Options: conn.Options{URL: "http://127.0.0.1:1/x"}, Body: []byte("abc")}})
	if m.Config.Scenario != "raw" || m.Config.BodyBytes != 3 || m.Config.Raw == nil {
		t.Errorf("config %+v", m.Config)
	}
	if m.Options.Duration != 3*time.Second || m.Options.Concurrency != 7 || m.Options.Open || m.Options.Pacer != nil {
		t.Errorf("options changed: %+v", m.Options)
	}
}

// TestKVProtocolFromURL: a kv scenario without a protocol speaks RESP to
// redis:// and wirebench's /kv over HTTP otherwise; Workers default to
// the concurrency (parallel keys' slices).
func TestKVProtocolFromURL(t *testing.T) {
	for url, want := range map[string]string{"redis://127.0.0.1:1": scenario.ProtocolRESP, "http://127.0.0.1:1": scenario.ProtocolHTTPRaw} {
		var o load.Options
		o.Concurrency = 4
		m := made(t, Client{Options: o, KV: &scenario.KVOptions{Name: scenario.ScenarioKVSet, URL: url}})
		ko := m.Scenario.(interface{ Options() scenario.KVOptions }).Options()
		if ko.Protocol != want || ko.Workers != 4 {
			t.Errorf("%s: protocol %q workers %d, want %q and 4", url, ko.Protocol, ko.Workers, want)
		}
		if m.Config.Scenario != scenario.ScenarioKVSet || m.Config.KVOptions == nil {
			t.Errorf("%s: config %+v", url, m.Config)
		}
	}
}

// TestReplaySchedule: a replay's recording is the run's schedule: open
// loop, no rate or stages, until the recording ends unless a duration
// bounds it; the request log is not part of the recorded options.
func TestReplaySchedule(t *testing.T) {
	file := filepath.Join(t.TempDir(), "access.log")
	log := `127.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "GET /users/1 HTTP/1.1" 200 12 "-" "curl"` + "\n" +
		`127.0.0.1 - - [10/Oct/2000:13:55:37 -0700] "GET /users/2 HTTP/1.1" 200 12 "-" "curl"` + "\n"
	if err := os.WriteFile(file, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, d := range []time.Duration{0, 5 * time.Second} {
		var o load.Options
		o.Rate, o.Stages, o.Duration = 100, []results.Stage{{Duration: time.Second, Target: 5}}, d
		m := made(t, Client{Options: o, Replay: &replay.Options{File: file, Options: conn.Options{URL: "http://127.0.0.1:1"}}})
		want := d
		if d == 0 {
			want = load.MaxDuration
		}
		if !m.Options.Open || m.Options.Pacer == nil || m.Options.Rate != 0 || m.Options.Stages != nil || m.Options.Duration != want {
			t.Errorf("-d %v: options %+v, want the recording's schedule until %v", d, m.Options, want)
		}
		if m.Config.Scenario != "replay" || m.Config.Replay == nil {
			t.Errorf("config %+v", m.Config)
		}
	}
}

// TestConcurrency: the workers a run uses, as the engine sizes them.
func TestConcurrency(t *testing.T) {
	var ramp, fixed load.Options
	ramp.Stages = []results.Stage{{Duration: time.Second, Target: 3.5}, {Duration: time.Second, Target: 2}}
	fixed.Concurrency = 20
	for _, c := range []struct {
		o    load.Options
		want int
	}{{load.Options{}, 10}, {fixed, 20}, {ramp, 4}} {
		if got := (Client{Options: c.o}).Concurrency(); got != c.want {
			t.Errorf("%+v: %d workers, want %d", c.o, got, c.want)
		}
	}
}
