package results

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// stepLoad is an open-loop step's load: offered/s for 2 s, every request
// taking lat (from the intended send) and svc (from the actual send).
func stepLoad(offered float64, lat, svc time.Duration) *Load {
	l := emptyResult(Segment{})
	l.Options.Rate, l.Options.Duration, l.Options.Concurrency = offered, 2*time.Second, 8
	l.Start = time.Unix(100, 0)
	l.End, l.Window = l.Start.Add(2*time.Second), 2*time.Second
	n := int64(offered * 2)
	for range n {
		l.Latency.Record(lat)
		l.Service.Record(svc)
		l.Lag.Record(lat - svc)
	}
	l.Requests = n
	return l
}

func TestCapacityStepFigures(t *testing.T) {
	t.Parallel()
	l := stepLoad(500, 3*time.Millisecond, 2*time.Millisecond)
	l.Failed, l.Interrupted = 10, 0
	l.Requests = 900 // 100 of the 1000 scheduled arrivals were never sent
	s := NewCapacityStep(500, l)
	if s.Achieved != 450 || s.Sent != 0.9 || s.Concurrency != 8 {
		t.Errorf("achieved %v sent %v c %d, want 450, 0.9, 8", s.Achieved, s.Sent, s.Concurrency)
	}
	near := func(a, b time.Duration) bool { return a >= b && a <= b+b/500 } // HDR's 3 digits
	if !near(s.P99, 3*time.Millisecond) || !near(s.ServiceP99, 2*time.Millisecond) || !near(s.LagP99, time.Millisecond) {
		t.Errorf("p99 %v service %v lag %v", s.P99, s.ServiceP99, s.LagP99)
	}
	if got := s.ErrorRate(); got != 10.0/900 {
		t.Errorf("error rate %v", got)
	}
	s.SetServerCPU(900 * time.Millisecond)
	if s.ServerCPUPerRequest != time.Millisecond || s.ServerCPU != 0.45 {
		t.Errorf("server CPU %v/req, %v cores; want 1ms, 0.45", s.ServerCPUPerRequest, s.ServerCPU)
	}
}

func testCapacity() *Capacity {
	c := &Capacity{Schema: CapacitySchema, Scenario: "raw", SLO: []string{"p99<20ms"}, Limit: LimitSLO,
		Rate: 1000, Low: 1000, High: 1050, ServerCPUPerRequest: 200 * time.Microsecond,
		Config: Config{Scenario: "raw", Raw: NewClientOptions(map[string]string{"url": "http://127.0.0.1:1/"})}}
	for _, r := range []float64{100, 1000, 1050} {
		s := NewCapacityStep(r, stepLoad(r, time.Millisecond, time.Millisecond))
		s.Verdict = StepPass
		if r == 1050 {
			s.Verdict = StepFail
		}
		c.Steps = append(c.Steps, s)
	}
	return c
}

func TestCapacityRoundTrip(t *testing.T) {
	t.Parallel()
	c := testCapacity()
	confirm := NewCapacityStep(1000, stepLoad(1000, 2*time.Millisecond, time.Millisecond))
	confirm.Verdict = StepPass
	c.Confirm = &confirm
	var buf bytes.Buffer
	if err := c.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	st, err := Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if !st.SingleRun || len(st.Trials) != 1 || st.Trials[0].Capacity == nil {
		t.Fatalf("FromCapacity: %+v", st)
	}
	got := st.Trials[0].Capacity
	if got.Rate != 1000 || got.High != 1050 || len(got.Steps) != 3 || !got.Steps[2].Load.Latency.Equal(c.Steps[2].Load.Latency) {
		t.Errorf("read back %+v", got)
	}
	if st.Trials[0].Load.Latency.Quantile(.5) != 2*time.Millisecond {
		t.Error("the trial's load is not the confirmation run's")
	}
	if !strings.Contains(st.Title, "http://127.0.0.1:1/") {
		t.Errorf("title %q lacks the target", st.Title)
	}
	if got := c.PerCore(); got != 5000 {
		t.Errorf("per core %v, want 5000", got)
	}
}

func TestCapacityTrialLoadWithoutAnswer(t *testing.T) {
	t.Parallel()
	c := testCapacity()
	for i := range c.Steps {
		c.Steps[i].Verdict = StepFail
	}
	c.Rate, c.Low, c.Limit = 0, 0, LimitMinRate
	if l := c.TrialLoad(); l != c.Steps[0].Load {
		t.Error("no answer: the trial's load should be the lowest rate's")
	}
	if (&Capacity{}).TrialLoad() != nil {
		t.Error("no steps: want no load")
	}
}

func TestReadCapacityRefuses(t *testing.T) {
	t.Parallel()
	c := testCapacity()
	c.Steps[1].Load.Service = nil
	var buf bytes.Buffer
	if err := c.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string]string{
		"schema":     `{"schema":"wirebench.load/v1"}`,
		"not json":   `{`,
		"histograms": buf.String(),
		"rate":       `{"schema":"wirebench.capacity/v1","steps":[{"offered":-1}]}`,
	} {
		if _, err := ReadCapacity(strings.NewReader(in)); !errors.Is(err, ErrCapacity) {
			t.Errorf("%s: err %v, want ErrCapacity", name, err)
		}
	}
}

func TestThresholdBoundAndLatency(t *testing.T) {
	t.Parallel()
	l := stepLoad(100, 30*time.Millisecond, 5*time.Millisecond)
	for _, tc := range []struct {
		expr         string
		bound        time.Duration
		latency      bool
		okLat, okSvc bool
	}{
		{"p99<20ms", 20 * time.Millisecond, true, false, true},
		{"avg<=40ms", 40 * time.Millisecond, true, true, true},
		{"max<1ms", time.Millisecond, true, false, false},
		{"errors<1%", 0, false, true, true},
	} {
		th, err := ParseThreshold(tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		b, lat := th.Bound()
		if b != tc.bound || lat != tc.latency {
			t.Errorf("%s: bound %v %v, want %v %v", tc.expr, b, lat, tc.bound, tc.latency)
		}
		if _, ok := th.CheckLatency(l.Latency); ok != tc.okLat {
			t.Errorf("%s on latency: %v, want %v", tc.expr, ok, tc.okLat)
		}
		if _, ok := th.CheckLatency(l.Service); ok != tc.okSvc {
			t.Errorf("%s on service: %v, want %v", tc.expr, ok, tc.okSvc)
		}
	}
}

func TestCapacityLine(t *testing.T) {
	t.Parallel()
	c := &Capacity{SLO: []string{"p99<20ms"}}
	for _, tc := range []struct {
		limit           string
		rate, high, cli float64
		want            string
	}{
		{LimitSLO, 4870, 5100, 0, "4,870/s at p99<20ms [4,870/s…5,100/s)"},
		{LimitMaxRate, 100000, 0, 0, "≥ 100,000/s at p99<20ms: every rate up to --max-rate met it"},
		{LimitMinRate, 0, 1, 0, "no rate met p99<20ms: even 1.00/s failed"},
		{LimitClient, 2000, 0, 2100, "≥ 2,000/s at p99<20ms: the client was the limit at 2,100/s, not the server"},
		{LimitClient, 0, 0, 100, "unknown: the client could not keep up even at 100/s"},
		{LimitTime, 1600, 0, 0, "≥ 1,600/s at p99<20ms (the search ran out of time)"},
		{LimitTime, 1600, 6400, 0, "1,600/s at p99<20ms [1,600/s…6,400/s)"},
	} {
		c.Limit, c.Rate, c.Low, c.High, c.ClientLimit = tc.limit, tc.rate, tc.rate, tc.high, tc.cli
		if got := CapacityLine(c); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.limit, got, tc.want)
		}
	}
}

func TestWriteCapacitySummary(t *testing.T) {
	t.Parallel()
	c := testCapacity()
	c.Steps[2].Why = "server: p99<20ms (31ms from the send)"
	c.Steps[1].SetServerCPU(400 * time.Millisecond)
	c.ServerCPUPerRequest = c.Steps[1].ServerCPUPerRequest
	c.Warnings = []string{"something to know"}
	var buf bytes.Buffer
	if err := WriteCapacitySummary(&buf, c); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"SLO p99<20ms, 3 steps", "1,050/s: fail server: p99<20ms (31ms from the send)", "200µs", "capacity: 1,000/s at p99<20ms [1,000/s…1,050/s)",
		"server CPU: 200µs per request at that rate, 5,000/s per core", "WARNING: something to know"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

// FuzzReadCapacity: any input is read or refused with ErrCapacity, never
// a panic; what is read renders.
func FuzzReadCapacity(f *testing.F) {
	var buf bytes.Buffer
	if err := testCapacity().WriteJSON(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(`{"schema":"wirebench.capacity/v1","steps":[{"offered":1,"load":{}}]}`))
	f.Add([]byte(`{"schema":"wirebench.capacity/v1","confirm":{"offered":-1}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ReadCapacity(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrCapacity) {
				t.Fatalf("error %v is not ErrCapacity", err)
			}
			return
		}
		_ = WriteCapacitySummary(io.Discard, c)
		_ = FromCapacity(c)
	})
}
