package replay

import (
	"context"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/capacity"
	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/results"
)

// TestSurvey: recording's 60 requests 1 ms apart span 59 ms; a looped
// pass is 60 ms, so the recording's own rate is 1000/s.
func TestSurvey(t *testing.T) {
	rec, err := Survey(Options{File: recording(t)})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Requests != 60 || rec.Period != 60*time.Millisecond || math.Abs(rec.Rate()-1000) > 1e-9 {
		t.Fatalf("survey: %+v, rate %g", rec, rec.Rate())
	}
	empty := filepath.Join(t.TempDir(), "empty.log")
	if err := os.WriteFile(empty, []byte("not a log line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Survey(Options{File: empty, Format: FormatCombined}); err == nil {
		t.Fatal("a recording of nothing readable surveyed without an error")
	}
}

// TestStepWindowSchedulesWholePasses: a step's window holds exactly
// whole passes of the looped schedule at the step's speed, and rate ×
// window (how the capacity search counts the scheduled arrivals) rounds
// up to the same count, so a step that sent every arrival reads 100%.
func TestStepWindowSchedulesWholePasses(t *testing.T) {
	path := recording(t)
	rec, err := Survey(Options{File: path})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		speed  float64
		d      time.Duration
		passes int64
	}{{1, 10 * time.Millisecond, 1}, {1, 200 * time.Millisecond, 3}, {4, 100 * time.Millisecond, 7}, {0.5, time.Second, 8}, {2.7, time.Second, 45}} {
		passes, window := rec.stepWindow(c.speed, c.d)
		if passes != c.passes {
			t.Errorf("speed %g, %v: %d passes, want %d", c.speed, c.d, passes, c.passes)
		}
		s, err := NewSchedule(func() (Source, io.Closer, error) { return Open(path, "", FieldMap{}) }, ScheduleOptions{Speed: c.speed, Loop: true})
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for k := uint64(0); ; k++ {
			at, stop := s.Due(k)
			if stop || at >= window {
				break
			}
			s.Take(k)
			n++
		}
		s.Close()
		rate := c.speed * rec.Rate()
		if want := passes * rec.Requests; n != want || int64(math.Ceil(rate*window.Seconds()-1e-9)) != want {
			t.Errorf("speed %g, %v: window %v schedules %d, rate × window %g, want %d", c.speed, c.d, window, n, rate*window.Seconds(), want)
		}
	}
}

// slowServer answers one request at a time, each after busy: its
// capacity is about 1/busy requests a second.
func slowServer(t *testing.T, busy time.Duration) string {
	t.Helper()
	var mu sync.Mutex
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		time.Sleep(busy)
		mu.Unlock()
		if r.URL.Path == "/missing/9" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte("ok"))
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// TestCapacityStep: one step replays whole passes at the step's speed;
// on a quiet machine (WIREBENCH_TIMING=1) the search's judge counts
// every arrival as sent.
func TestCapacityStep(t *testing.T) {
	o := Options{File: recording(t), Options: conn.Options{URL: slowServer(t, 0)}}
	rec, err := Survey(o)
	if err != nil {
		t.Fatal(err)
	}
	var base load.Options
	base.Timeout = 5 * time.Second
	step := CapacityStep(o, rec, base, 10*time.Millisecond, 0)
	m, err := step(context.Background(), 2*rec.Rate(), 16, 120*time.Millisecond) // speed 2: 4 passes of 30 ms
	if err != nil {
		t.Fatal(err)
	}
	st := results.NewCapacityStep(2*rec.Rate(), m.Load)
	// 4 passes of 30 ms, the window half a gap (0.5 ms at speed 2) short.
	if d := m.Load.Options.Duration; d != 119750*time.Microsecond || m.Load.Requests > 240 || m.Load.Failed != 0 || m.Load.Scenario != "replay" {
		t.Fatalf("step: window %v (want 119.75ms), %d requests (at most 240), %d failed %v", d, m.Load.Requests, m.Load.Failed, m.Load.Failures)
	}
	// A worker that reaches an arrival after the window drops it (the
	// engine's rule): how many a busy machine drops is its own affair.
	testkit.NeedTiming(t)
	if st.Sent < 0.99 {
		t.Fatalf("step: %d requests of 240, sent %.3f", m.Load.Requests, st.Sent)
	}
}

// TestReplayCapacity: a server that serves one request at a time, 4 ms
// each (250/s at best), cannot carry the recording's 1000/s: the search
// in speed answers under ¼ (timing: WIREBENCH_TIMING=1). Measured on the
// shared 2-CPU box: 0.115 (115/s), its steps at 0.25 and up failing on
// service time.
func TestReplayCapacity(t *testing.T) {
	testkit.NeedTiming(t)
	o := Options{File: recording(t), Options: conn.Options{URL: slowServer(t, 4*time.Millisecond)}}
	rec, err := Survey(o)
	if err != nil {
		t.Fatal(err)
	}
	var base load.Options
	base.Timeout, base.GracefulStop = 5*time.Second, time.Second
	slo, err := results.ParseThreshold("p99<100ms")
	if err != nil {
		t.Fatal(err)
	}
	co := capacity.Options{SLO: []results.Threshold{slo}, MinRate: 0.01 * rec.Rate(), MaxRate: 8 * rec.Rate(), StartRate: rec.Rate(),
		Growth: 2, Precision: 0.1, StepDuration: 2 * time.Second, Warmup: 200 * time.Millisecond, ConfirmDuration: -1, Concurrency: 64}
	res, err := capacity.Search(context.Background(), co, CapacityStep(o, rec, base, co.Warmup, 0))
	if err != nil {
		t.Fatal(err)
	}
	speed := res.Rate / rec.Rate()
	t.Logf("capacity %.0f/s = speed %.3g (limit %s), %d steps", res.Rate, speed, res.Limit, len(res.Steps))
	for _, s := range res.Steps {
		t.Logf("  %.0f/s (speed %.3g): %s %s", s.Offered, s.Offered/rec.Rate(), s.Verdict, s.Why)
	}
	// Below 250/s (the server's bound: a sleep is never shorter), above
	// a 20th of it; near its capacity the judge may name the client (its
	// workers queue behind the server's one-at-a-time lock).
	if (res.Limit != results.LimitSLO && res.Limit != results.LimitClient) || speed < 0.0125 || speed >= 0.25 {
		t.Fatalf("speed %.3g (%.0f/s), limit %s: want below 0.25 (a 250/s server, the recording at 1000/s)", speed, res.Rate, res.Limit)
	}
}
