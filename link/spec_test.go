package link

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	for _, tc := range []struct {
		in   string
		want Spec
	}{
		{"rtt=80ms,rate=2mbit,loss=1%", Spec{Delay: 40 * ms, Up: 2e6, Down: 2e6, Loss: Random(0.01)}},
		{"delay=25ms,jitter=3ms,up=768kbit,down=1.6mbit", Spec{Delay: 25 * ms, Jitter: 3 * ms, Up: 768e3, Down: 1.6e6}},
		{"rate=10mbit/s,queue=64kb", Spec{Up: 10e6, Down: 10e6, QueueBytes: 64000}},
		{"queue=100", Spec{QueuePackets: 100}},
		{"queue=100p,seed=7", Spec{QueuePackets: 100, Seed: 7}},
		{"queue=64KiB", Spec{QueueBytes: 65536}},
		{"loss=2%,burst=4", Spec{Loss: Bursty(0.02, 4)}},
		{"ge=1%/30%/100%/0%", Spec{Loss: Loss{P: 0.01, R: 0.3, BadLoss: 1}}},
		{"ge=1%/30%", Spec{Loss: Loss{P: 0.01, R: 0.3, BadLoss: 1}}},
		{"jitter=5ms,reorder", Spec{Jitter: 5 * ms, Reorder: true}},
		{"rate=unlimited,rtt=1s", Spec{Delay: 500 * ms}},
		{" RTT = 10ms , Loss = 0.5% ", Spec{Delay: 5 * ms, Loss: Random(0.005)}},
		{"3g", Spec{Preset: "3g", Delay: 150 * ms, Up: 768e3, Down: 1.6e6}},
		{"3g,loss=1%", Spec{Preset: "3g", Delay: 150 * ms, Up: 768e3, Down: 1.6e6, Loss: Random(0.01)}},
		{"lte-lossy,loss=0%", Spec{Preset: "lte-lossy", Delay: 35 * ms, Jitter: 5 * ms, Up: 12e6, Down: 12e6}},
	} {
		got, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if *got != tc.want {
			t.Errorf("Parse(%q) = %+v, want %+v", tc.in, *got, tc.want)
		}
	}
	for _, none := range []string{"", "none", "  "} {
		if s, err := Parse(none); s != nil || err != nil {
			t.Errorf("Parse(%q) = %v, %v; want nil, nil", none, s, err)
		}
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"rtt=80", "want a duration with its unit"},
		{"rate=2mbps", "ambiguous unit"},
		{"rate=2", "want a rate with its unit"},
		{"rate=0.5kbit", "want 1kbit to 100gbit"},
		{"rate=0", "write unlimited (e.g. rate=unlimited)"},
		{"rate=0mbit", "write unlimited (e.g. rate=unlimited)"},
		{"up=0kbit/s", "a rate of 0 carries nothing"},
		{"down=0.0", "a rate of 0 carries nothing"},
		{"loss=1", "want a percentage with %"},
		{"loss=101%", "0% to 100%"},
		{"burst=3", "give loss= too"},
		{"loss=60%,burst=1.2", "can be at most"},
		{"lose=1%", "did you mean loss?"},
		{"4G", ""}, // presets are case-insensitive: no error
		{"satelite", "did you mean satellite?"},
		{"rtt=10ms,3g", "a preset comes first"},
		{"rtt=10ms,,loss=1%", "empty item"},
		{"reorder", "reorder without jitter"},
		{"ge=1%/0%", "stay bad for ever"},
		{"ge=1%", "want P/R"},
		{"loss=1%,ge=1%/30%", "not both"},
		{"queue=10", ""},
		{"queue=100b", "want 1500 bytes"},
		{"queue=1.5p", "want 1 to"},
		{"delay=-1ms", "want 0 to 10s"},
		{"delay=11s", "want 0 to 10s"},
		{"seed=x", "invalid syntax"},
		{"foo=1", `unknown key "foo"`},
		{"rtt=50ms,rtt=60ms", `the same value as "rtt=50ms"`},
		{"delay=5ms,rtt=50ms", `the same value as "delay=5ms"`},
		{"rate=10mbit,up=1mbit", `the same value as "rate=10mbit"`},
		{"down=1mbit,rate=10mbit", `the same value as "down=1mbit"`},
		{"loss=1%,loss=2%", `the same value as "loss=1%"`},
		{"3g,rtt=100ms,loss=1%", ""}, // a preset's values are overridden
		{"up=1mbit,down=2mbit,rtt=10ms,jitter=1ms,loss=1%,burst=2,queue=10,seed=1", ""},
	} {
		_, err := Parse(tc.in)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("Parse(%q): %v, want no error", tc.in, err)
		case tc.want == "":
		case err == nil:
			t.Errorf("Parse(%q): no error, want %q", tc.in, tc.want)
		case !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), tc.want):
			t.Errorf("Parse(%q): %v, want ErrSpec containing %q", tc.in, err, tc.want)
		}
	}
}

func TestPresets(t *testing.T) {
	t.Parallel()
	want := []string{"3g", "4g", "lte", "lte-lossy", "satellite", "transatlantic", "datacenter"}
	for _, name := range want {
		s, err := Parse(name)
		if err != nil || s == nil {
			t.Fatalf("preset %s: %v", name, err)
		}
		if s.Delay == 0 || PresetSource(name) == "" {
			t.Errorf("preset %s: %+v, source %q: want a delay and a source", name, s, PresetSource(name))
		}
	}
	if got := len(PresetNames()); got < len(want) {
		t.Errorf("%d presets, want at least %d", got, len(want))
	}
}

func TestLossRate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		l    Loss
		want float64
	}{
		{Random(0.05), 0.05},
		{Bursty(0.02, 4), 0.02},
		{Bursty(0.3, 10), 0.3},
		{Loss{P: 0.01, R: 0.3, BadLoss: 0.5, GoodLoss: 0.001}, 0.01/0.31*0.5 + 0.30/0.31*0.001},
	} {
		if got := tc.l.Rate(); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%+v.Rate() = %v, want %v", tc.l, got, tc.want)
		}
	}
}

// TestStringRoundTrip: String is Parse's language, and stable.
func TestStringRoundTrip(t *testing.T) {
	t.Parallel()
	for _, in := range append(PresetNames(), "rtt=80ms,rate=2mbit,loss=1%", "delay=1.5ms,jitter=300us,reorder,up=1kbit,down=3gbit,queue=9000b,seed=-3", "loss=3%,burst=2.5", "queue=7p") {
		checkRoundTrip(t, in)
	}
}

func checkRoundTrip(t *testing.T, in string) {
	t.Helper()
	s, err := Parse(in)
	if err != nil || s == nil {
		return
	}
	out := s.String()
	s2, err := Parse(out)
	if err != nil {
		t.Fatalf("Parse(%q) → String %q: %v", in, out, err)
	}
	s2.Preset = s.Preset
	if out2 := s2.String(); out2 != out {
		t.Fatalf("Parse(%q).String() = %q, but that parses to %q", in, out, out2)
	}
	if d := math.Abs(s2.Loss.Rate() - s.Loss.Rate()); d > 1e-9 || s2.Delay != s.Delay || s2.Up != s.Up || s2.Down != s.Down || s2.Jitter != s.Jitter {
		t.Fatalf("Parse(%q) = %+v; its String %q parses to %+v", in, *s, out, *s2)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"rtt=80ms,rate=2mbit,loss=1%", "3g,loss=2%,burst=3", "ge=1%/30%/90%/0.1%", "queue=64kib,jitter=2ms,reorder", "up=1.5mbit,down=unlimited", "delay=10s", "rate=100gbit"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := Parse(in)
		if err != nil {
			if !errors.Is(err, ErrSpec) {
				t.Fatalf("Parse(%q): %v is not ErrSpec", in, err)
			}
			return
		}
		if s == nil {
			return
		}
		if s.Delay < 0 || s.Delay > MaxDelay || s.Jitter < 0 || s.Up < 0 || s.Down < 0 || s.Up > MaxRate || s.Down > MaxRate {
			t.Fatalf("Parse(%q) = %+v: out of range", in, *s)
		}
		l := s.Loss
		for _, x := range []float64{l.P, l.R, l.BadLoss, l.GoodLoss} {
			if !(x >= 0 && x <= 1) {
				t.Fatalf("Parse(%q) = %+v: a probability out of [0,1]", in, *s)
			}
		}
		checkRoundTrip(t, in)
		// The pipe takes any spec Parse accepts.
		p := NewPipe(*s, true)
		for i := range 50 {
			p.Admit(time.Duration(i)*time.Millisecond, 1500)
		}
	})
}

// TestCheck: a calibration within the tolerances passes, one outside
// them fails naming the figure.
func TestCheck(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	rate := Spec{Delay: 25 * ms, Up: 10e6, Down: 10e6}
	good := Calibration{RTTExpected: 50 * ms, RTTUDP: 51 * ms, RTTUDPMedian: 52 * ms, UpWire: 9.9e6, DownWire: 10.1e6, UpGoodput: 9.6e6, DownGoodput: 9.6e6}
	for _, tc := range []struct {
		s    Spec
		mod  func(c *Calibration)
		want string
	}{
		{rate, func(c *Calibration) {}, ""},
		{rate, func(c *Calibration) { c.RTTUDP = 53 * ms }, "UDP RTT 53ms, set 50ms (±2.5ms)"},
		{rate, func(c *Calibration) { c.DownWire = 8.9e6 }, "down rate 8.9mbit, set 10mbit (±10%)"},
		{Spec{Delay: 25 * ms, Up: 10e6, Down: 10e6, Loss: Random(0.02)}, func(c *Calibration) { c.DownWire = 5e6 }, ""}, // TCP's rate on a lossy link
		{Spec{Delay: 25 * ms, Jitter: 5 * ms}, func(c *Calibration) { c.RTTUDP = 40 * ms; c.RTTUDPMedian = 55 * ms }, ""},
		{Spec{Delay: 25 * ms, Jitter: 5 * ms}, func(c *Calibration) { c.RTTUDPMedian = 63 * ms }, "median UDP RTT 63ms"},
		{Spec{Delay: 25 * ms, Loss: Random(0.05)}, func(c *Calibration) { c.LossPackets = 2000; c.LossUp = 0.05; c.LossDown = 0.055 }, ""},
		{Spec{Delay: 25 * ms, Loss: Random(0.05)}, func(c *Calibration) { c.LossPackets = 2000; c.LossUp = 0.05; c.LossDown = 0.08 }, "down loss 8.00%, set 5.00%"},
	} {
		c := good
		tc.mod(&c)
		err := Check(&c, tc.s)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v %+v: %v", tc.s, c, err)
		case tc.want != "" && (err == nil || !errors.Is(err, ErrCalibration) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v %+v: %v, want %q", tc.s, c, err, tc.want)
		}
	}
}

// TestArrivalRate: the slope of a regular train is its rate, and one
// late first arrival moves it little.
func TestArrivalRate(t *testing.T) {
	t.Parallel()
	at := make([]time.Duration, 100)
	for i := range at {
		at[i] = time.Duration(i) * 1200 * time.Microsecond // 1500 bytes at 10 Mbit/s
	}
	if r, err := arrivalRate(at, 1500); err != nil || math.Abs(r-10e6) > 1 {
		t.Errorf("regular train: %v, %v; want 10e6", r, err)
	}
	at[0] += 5 * time.Millisecond // the receiver woke late for the first
	if r, _ := arrivalRate(at, 1500); math.Abs(r-10e6)/10e6 > 0.02 {
		t.Errorf("one late first arrival: %.0f bit/s, want 10e6 within 2%%", r)
	}
	if _, err := arrivalRate(at[:2], 1500); err == nil {
		t.Error("two arrivals: no error")
	}
}

// TestStatsSince: a run's own counts and lateness, and when the relay
// was the limit.
func TestStatsSince(t *testing.T) {
	t.Parallel()
	s0 := Stats{Up: PipeStats{Packets: 10}, CPU: time.Millisecond, Sent: 10, Late: 100 * time.Microsecond}
	s := Stats{Up: PipeStats{Packets: 110}, CPU: 11 * time.Millisecond, Sent: 110, Late: 200 * time.Microsecond}
	d := s.Since(s0)
	// (200×110 − 100×10) / 100 = 210 µs
	if d.Up.Packets != 100 || d.CPU != 10*time.Millisecond || d.CPUPerPacket != 100*time.Microsecond || d.Sent != 100 || d.Late != 210*time.Microsecond {
		t.Errorf("Since = %+v", d)
	}
	spec := Spec{Delay: 25 * time.Millisecond}
	for _, tc := range []struct {
		late, cpu, wall time.Duration
		want            string
	}{
		{500 * time.Microsecond, time.Second, 10 * time.Second, ""},
		{2 * time.Millisecond, time.Second, 10 * time.Second, ""}, // under a tenth of 25 ms
		{3 * time.Millisecond, time.Second, 10 * time.Second, "packets left 3ms late"},
		{0, 9500 * time.Millisecond, 10 * time.Second, "95% of a CPU"},
	} {
		got := Stats{Late: tc.late, CPU: tc.cpu}.RelayLimited(spec, tc.wall)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("late %v cpu %v: %q, want %q", tc.late, tc.cpu, got, tc.want)
		}
	}
}
