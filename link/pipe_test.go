package link

import (
	"math"
	"testing"
	"time"
)

// feed admits n packets of size bytes, one every gap from t0, and returns
// the delivery times of those delivered (0 for the others) and the count.
func feed(p *Pipe, n, size int, gap time.Duration) (out []time.Duration, delivered int) {
	out = make([]time.Duration, n)
	for i := range n {
		at, v := p.Admit(time.Duration(i)*gap, size)
		if v == Deliver {
			out[i] = at
			delivered++
		}
	}
	return out, delivered
}

func TestPipeDelay(t *testing.T) {
	t.Parallel()
	p := NewPipe(Spec{Delay: 40 * time.Millisecond}, true)
	out, n := feed(p, 100, 1200, time.Millisecond)
	if n != 100 {
		t.Fatalf("%d of 100 delivered on a lossless link", n)
	}
	for i, at := range out {
		if want := time.Duration(i)*time.Millisecond + 40*time.Millisecond; at != want {
			t.Fatalf("packet %d leaves at %v, want %v", i, at, want)
		}
	}
}

// TestPipeRate: a saturating stream leaves at the rate, each packet one
// serialisation time after the one before; a slow stream is not delayed.
func TestPipeRate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		spec Spec
		up   bool
		want float64 // bits/s
	}{
		{Spec{Up: 10e6, Down: 2e6, QueuePackets: 1 << 20}, true, 10e6},
		{Spec{Up: 10e6, Down: 2e6, QueuePackets: 1 << 20}, false, 2e6},
		{Spec{Up: 768e3, Down: 768e3, Delay: 150 * time.Millisecond, QueuePackets: 1 << 20}, true, 768e3},
	} {
		p := NewPipe(tc.spec, tc.up)
		const n, size = 10000, 1500
		out, _ := feed(p, n, size, 0) // all at once: the queue holds them all
		span := out[n-1] - out[0]
		got := float64((n-1)*size*8) / span.Seconds()
		if math.Abs(got-tc.want)/tc.want > 0.001 {
			t.Errorf("%+v up=%v: %.0f bit/s, want %.0f", tc.spec, tc.up, got, tc.want)
		}
		if first := time.Duration(size * 8 * 1e9 / tc.want); out[0] != first+tc.spec.Delay {
			t.Errorf("first packet leaves at %v, want its serialisation %v + delay %v", out[0], first, tc.spec.Delay)
		}
	}
	// Below the rate, each packet waits only its own serialisation.
	p := NewPipe(Spec{Up: 10e6}, true)
	out, _ := feed(p, 100, 1250, 10*time.Millisecond) // 1 Mbit/s offered
	for i, at := range out {
		if want := time.Duration(i)*10*time.Millisecond + time.Millisecond; at != want {
			t.Fatalf("packet %d at %v, want %v", i, at, want)
		}
	}
}

func TestPipeQueue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		spec Spec
		want int // delivered out of 100 sent at once
	}{
		{Spec{Up: 1e6, QueuePackets: 10}, 10},
		{Spec{Up: 1e6, QueueBytes: 15000}, 10},
		{Spec{Up: 1e6, QueueBytes: 14999}, 9},
		{Spec{Up: 1e6}, 100}, // the default queue, 1000 packets
	} {
		p := NewPipe(tc.spec, true)
		_, n := feed(p, 100, 1500, 0)
		if n != tc.want || p.Stats.QueueDrops != int64(100-tc.want) {
			t.Errorf("%+v: %d delivered, %d queue drops; want %d delivered", tc.spec, n, p.Stats.QueueDrops, tc.want)
		}
	}
	// The queue drains at the rate: after 12 ms at 1 Mbit/s one 1500-byte
	// packet is through and one more fits.
	p := NewPipe(Spec{Up: 1e6, QueuePackets: 2}, true)
	for _, tc := range []struct {
		at   time.Duration
		want Verdict
	}{{0, Deliver}, {0, Deliver}, {0, QueueDrop}, {11 * time.Millisecond, QueueDrop}, {12 * time.Millisecond, Deliver}, {12 * time.Millisecond, QueueDrop}} {
		if _, v := p.Admit(tc.at, 1500); v != tc.want {
			t.Errorf("at %v: verdict %d, want %d", tc.at, v, tc.want)
		}
	}
}

// TestPipeLoss: the fraction lost is the model's rate within four
// standard errors, and bursty loss comes in bursts of the mean length.
func TestPipeLoss(t *testing.T) {
	t.Parallel()
	const n = 200_000
	for _, tc := range []struct {
		loss      Loss
		meanBurst float64
	}{
		{Random(0.01), 1 / (1 - 0.01)},
		{Random(0.05), 1 / (1 - 0.05)},
		{Bursty(0.02, 4), 4},
		{Bursty(0.1, 2), 2},
	} {
		for _, seed := range []int64{0, 1, 99} {
			p := NewPipe(Spec{Loss: tc.loss, Seed: seed}, false)
			lost, bursts, inBurst := 0, 0, false
			for i := range n {
				_, v := p.Admit(time.Duration(i), 100)
				if v == Lost {
					lost++
					if !inBurst {
						bursts++
					}
				}
				inBurst = v == Lost
			}
			rate := tc.loss.Rate()
			// Bursty loss is correlated: its variance is larger by about
			// (1+ρ)/(1−ρ) with ρ = 1 − P − R; the bound widens with it.
			rho := 1 - tc.loss.P - tc.loss.R
			if tc.loss.P == 0 {
				rho = 0
			}
			se := math.Sqrt(rate * (1 - rate) / n * (1 + rho) / (1 - rho))
			if got := float64(lost) / n; math.Abs(got-rate) > 4*se {
				t.Errorf("%+v seed %d: lost %.4f, want %.4f ± %.4f", tc.loss, seed, got, rate, 4*se)
			}
			if mb := float64(lost) / float64(bursts); math.Abs(mb-tc.meanBurst)/tc.meanBurst > 0.1 {
				t.Errorf("%+v seed %d: mean burst %.2f packets, want %.2f", tc.loss, seed, mb, tc.meanBurst)
			}
			if p.Stats.Lost != int64(lost) || p.Stats.Delivered != int64(n-lost) {
				t.Errorf("stats %+v, counted %d lost", p.Stats, lost)
			}
		}
	}
}

// TestPipeSeeded: one seed, one fate for every packet; another seed, other fates.
func TestPipeSeeded(t *testing.T) {
	t.Parallel()
	fates := func(seed int64, up bool) string {
		p := NewPipe(Spec{Loss: Random(0.3), Seed: seed}, up)
		b := make([]byte, 200)
		for i := range b {
			_, v := p.Admit(0, 1)
			b[i] = '0' + byte(v)
		}
		return string(b)
	}
	a, again := fates(5, true), fates(5, true)
	if a != again {
		t.Error("the same seed lost different packets")
	}
	if a == fates(6, true) || a == fates(5, false) {
		t.Error("another seed or direction lost the same packets")
	}
}

// TestPipeJitter: jitter varies the delay with its standard deviation and
// never reorders unless asked.
func TestPipeJitter(t *testing.T) {
	t.Parallel()
	const n = 20000
	gap := 100 * time.Millisecond // 14 sd apart: order keeping never bites
	p := NewPipe(Spec{Delay: 50 * time.Millisecond, Jitter: 5 * time.Millisecond}, true)
	out, _ := feed(p, n, 100, gap)
	var sum, sum2 float64
	for i, at := range out {
		d := (at - time.Duration(i)*gap).Seconds() * 1e3
		sum += d
		sum2 += d * d
	}
	mean := sum / n
	sd := math.Sqrt(sum2/n - mean*mean)
	if math.Abs(mean-50) > 0.2 || math.Abs(sd-5) > 0.2 {
		t.Errorf("delay mean %.2f ms sd %.2f ms, want 50 and 5", mean, sd)
	}
	for _, reorder := range []bool{false, true} {
		p := NewPipe(Spec{Delay: 50 * time.Millisecond, Jitter: 5 * time.Millisecond, Reorder: reorder}, true)
		out, _ := feed(p, n, 100, 100*time.Microsecond)
		swaps := 0
		for i := 1; i < n; i++ {
			if out[i] < out[i-1] {
				swaps++
			}
		}
		if (swaps > 0) != reorder {
			t.Errorf("reorder=%v: %d packets overtook the one before", reorder, swaps)
		}
	}
}
