package link

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/typo"
)

// ErrSpec reports a --link SPEC that cannot be parsed or is out of range;
// its text names the item at fault and what was wanted.
var ErrSpec = errors.New("link: invalid spec")

// Spec is an emulated link. Up is the client → server direction, Down the
// server → client one. The zero value is a link with no delay, no rate
// limit and no loss (the relay's own cost only).
type Spec struct {
	// Preset is the named preset the spec started from, "" if none.
	Preset string `json:"preset,omitempty"`
	// Delay is one-way, in each direction: the round trip is 2×Delay.
	Delay time.Duration `json:"delay"`
	// Jitter is the standard deviation of a normal variation added to
	// each packet's delay (clamped at zero delay). Packets keep their
	// order unless Reorder is set, so jitter only ever adds delay to a
	// packet that would overtake the one before it.
	Jitter  time.Duration `json:"jitter,omitempty"`
	Reorder bool          `json:"reorder,omitempty"`
	// Up and Down are rates in bits per second; 0 is unlimited.
	Up   int64 `json:"up_bps,omitempty"`
	Down int64 `json:"down_bps,omitempty"`
	// Loss is each direction's loss. Its zero value loses nothing.
	Loss Loss `json:"loss,omitempty"`
	// QueueBytes or QueuePackets bound each direction's drop-tail queue
	// in front of the rate limit (the packets waiting or being sent); a
	// packet that does not fit is dropped. Both 0: DefaultQueuePackets.
	QueueBytes   int `json:"queue_bytes,omitempty"`
	QueuePackets int `json:"queue_packets,omitempty"`
	// Seed seeds the loss and jitter RNGs (0: a fixed default, so that two
	// runs of one spec drop the same packets of the same sequence).
	Seed int64 `json:"seed,omitempty"`
}

// DefaultQueuePackets is the queue when a spec names none: Linux's
// default txqueuelen.
const DefaultQueuePackets = 1000

// Loss is a loss model: Gilbert-Elliott, with a two-state Markov chain
// (good, bad) per direction. P is the chance of going good → bad at a
// packet, R of going bad → good; a packet is lost with BadLoss in the
// bad state and GoodLoss in the good one (netem's "gemodel p r 1-h 1-k").
// Random loss at rate x is GoodLoss = x with P = 0.
type Loss struct {
	P        float64 `json:"p,omitempty"`
	R        float64 `json:"r,omitempty"`
	BadLoss  float64 `json:"bad_loss,omitempty"`
	GoodLoss float64 `json:"good_loss,omitempty"`
}

// Random is independent loss of each packet with probability x.
func Random(x float64) Loss { return Loss{GoodLoss: x} }

// Bursty is loss at an average rate x in bursts of mean length burst
// packets (the simple Gilbert model: every packet of the bad state is
// lost, none of the good one's): R = 1/burst and P = x·R/(1−x).
func Bursty(x, burst float64) Loss {
	if burst <= 1 {
		return Random(x)
	}
	r := 1 / burst
	return Loss{P: x * r / (1 - x), R: r, BadLoss: 1}
}

// Rate is the long-run fraction of packets lost: the stationary chance
// of the bad state times its loss, plus the good state's likewise.
func (l Loss) Rate() float64 {
	if l.P == 0 {
		return l.GoodLoss
	}
	bad := l.P / (l.P + l.R)
	return bad*l.BadLoss + (1-bad)*l.GoodLoss
}

// Zero reports a model that never loses a packet.
func (l Loss) Zero() bool { return l.GoodLoss == 0 && (l.P == 0 || l.BadLoss == 0) }

// RTT is the round trip the spec sets (without serialisation): 2×Delay.
func (s Spec) RTT() time.Duration { return 2 * s.Delay }

// sameValue names the values keys set where it is not the key's own.
var sameValue = map[string][]string{"rtt": {"delay"}, "rate": {"up", "down"}, "gemodel": {"ge"}}

// Parse reads a --link SPEC: comma-separated items, each key=value or a
// preset's name (which sets its values; later items override them):
//
//	rtt=80ms          round trip, split evenly: delay=40ms each way
//	delay=40ms        one way, each direction
//	jitter=5ms        standard deviation of each packet's delay
//	reorder           let jitter reorder packets (default: keep order)
//	rate=2mbit        both directions; up=, down= each one (client → server is up)
//	loss=1%           random loss, each direction
//	burst=4           with loss: bursts of 4 packets on average (Gilbert)
//	ge=P/R/BAD/GOOD   Gilbert-Elliott in full, as netem's gemodel p r 1-h 1-k
//	queue=100         drop-tail queue: packets (100, 100p), or bytes (64kb, 64kib)
//	seed=7            loss and jitter RNG seed
//
// Rates take tc's units: bit, kbit, mbit, gbit (powers of 1000), or
// unlimited. "none" (or "") is no link at all: Parse returns nil; rtt=0
// is the relay with nothing emulated.
func Parse(s string) (*Spec, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "none" {
		return nil, nil
	}
	sp := &Spec{}
	var loss, burst float64
	var lossSet, burstSet, geSet bool
	setBy := map[string]string{} // the item that set each value
	for i, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		key, val, hasVal := strings.Cut(item, "=")
		key = strings.ToLower(strings.TrimSpace(key))
		val = strings.TrimSpace(val)
		bad := func(want string) error {
			return fmt.Errorf("%w: %q: %s", ErrSpec, item, want)
		}
		if !hasVal {
			switch {
			case key == "reorder":
				sp.Reorder = true
			case presets()[key] != nil:
				if i != 0 {
					return nil, bad("a preset comes first, its values overridden by the items after it")
				}
				p := presets()[key]
				*sp = p.Spec
				sp.Preset = key
				if !sp.Loss.Zero() {
					geSet = true
				}
			case key == "":
				return nil, fmt.Errorf("%w: empty item in %q", ErrSpec, s)
			default:
				return nil, bad("want key=value or a preset (" + strings.Join(PresetNames(), ", ") + ")" + didYouMean(key))
			}
			continue
		}
		// A value given twice is a typo or a mistake (rtt= and delay= are
		// one value, rate= is up= and down=): the last silently winning
		// would emulate another link than the one the user meant. A
		// preset's values may be overridden, once each.
		slots, ok := sameValue[key]
		if !ok {
			slots = []string{key}
		}
		for _, sl := range slots {
			if prev, dup := setBy[sl]; dup {
				return nil, bad(fmt.Sprintf("the same value as %q: give each once (rtt= or delay=; rate=, or up= and down=)", prev))
			}
		}
		for _, sl := range slots {
			setBy[sl] = item
		}
		var err error
		switch key {
		case "rtt":
			var d time.Duration
			if d, err = duration(val, 2*MaxDelay); err == nil {
				sp.Delay = d / 2
			}
		case "delay":
			sp.Delay, err = duration(val, MaxDelay)
		case "jitter":
			sp.Jitter, err = duration(val, MaxDelay)
		case "reorder":
			sp.Reorder, err = strconv.ParseBool(val)
		case "rate":
			if sp.Up, err = rate(val); err == nil {
				sp.Down = sp.Up
			}
		case "up":
			sp.Up, err = rate(val)
		case "down":
			sp.Down, err = rate(val)
		case "loss":
			loss, err = percent(val, false)
			lossSet = true
		case "burst":
			burst, err = strconv.ParseFloat(val, 64)
			if err != nil || !(burst >= 1 && burst <= 1e6) {
				err = errors.New("want a mean burst length in packets, 1 to 1e6")
			}
			burstSet = true
		case "ge", "gemodel":
			sp.Loss, err = gemodel(val)
			geSet = true
		case "queue":
			sp.QueueBytes, sp.QueuePackets, err = queue(val)
		case "seed":
			sp.Seed, err = strconv.ParseInt(val, 10, 64)
		default:
			return nil, bad("unknown key " + strconv.Quote(key) + " (want rtt, delay, jitter, reorder, rate, up, down, loss, burst, ge, queue or seed)" + didYouMean(key))
		}
		if err != nil {
			return nil, bad(err.Error())
		}
	}
	switch {
	case burstSet && !lossSet:
		return nil, fmt.Errorf("%w: %q: burst= is the mean length of loss bursts: give loss= too", ErrSpec, s)
	case lossSet && geSet && sp.Preset == "":
		return nil, fmt.Errorf("%w: %q: give loss= (with burst=) or ge=, not both", ErrSpec, s)
	case lossSet && burst > 1 && loss > burst/(burst+1):
		// Beyond this the good → bad chance P = loss·R/(1−loss) exceeds 1.
		return nil, fmt.Errorf("%w: %q: loss in bursts of %g packets on average can be at most %s", ErrSpec, s, burst, pct(burst/(burst+1)))
	case lossSet:
		sp.Loss = Bursty(loss, burst)
	}
	if sp.Reorder && sp.Jitter == 0 {
		return nil, fmt.Errorf("%w: %q: reorder without jitter reorders nothing: give jitter= too", ErrSpec, s)
	}
	return sp, nil
}

// MaxDelay bounds delay and jitter (and the RTT, twice this): far beyond any path on Earth or to a
// geostationary satellite, short of anything a run would wait for.
const MaxDelay = 10 * time.Second

func duration(v string, most time.Duration) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	switch {
	case err != nil:
		if _, e := strconv.ParseFloat(v, 64); e == nil {
			return 0, errors.New("want a duration with its unit, e.g. 40ms")
		}
		return 0, errors.New("want a duration, e.g. 40ms or 1.5s")
	case d < 0 || d > most:
		return 0, fmt.Errorf("want 0 to %s", most)
	}
	return d, nil
}

// MaxRate bounds a rate; the relay copies far fewer bits than this.
const MaxRate = 100_000_000_000

// errZeroRate refuses a rate of zero with or without a unit: it reads as
// a link that carries nothing as well as one without a limit, so neither
// is guessed.
var errZeroRate = errors.New("a rate of 0 carries nothing: for no limit write unlimited (e.g. rate=unlimited) or leave the rate out")

// rate reads tc's units: bit, kbit, mbit, gbit; "unlimited" is 0.
func rate(v string) (int64, error) {
	l := strings.ToLower(v)
	if l == "unlimited" {
		return 0, nil
	}
	l = strings.TrimSuffix(l, "/s")
	if f, err := strconv.ParseFloat(l, 64); err == nil && f == 0 {
		return 0, errZeroRate
	}
	mult := 0.0
	for _, u := range []struct {
		suffix string
		m      float64
	}{{"kbit", 1e3}, {"mbit", 1e6}, {"gbit", 1e9}, {"bit", 1}} {
		if strings.HasSuffix(l, u.suffix) {
			l, mult = strings.TrimSuffix(l, u.suffix), u.m
			break
		}
	}
	if mult == 0 {
		if strings.HasSuffix(l, "bps") {
			return 0, errors.New("ambiguous unit (tc reads bps as bytes per second, most people as bits): write kbit, mbit or gbit")
		}
		return 0, errors.New("want a rate with its unit: bit, kbit, mbit or gbit (e.g. 2mbit), or unlimited")
	}
	f, err := strconv.ParseFloat(l, 64)
	if err != nil || math.IsNaN(f) {
		return 0, errors.New("want a number before the unit, e.g. 2mbit or 1.5mbit")
	}
	if f == 0 {
		return 0, errZeroRate
	}
	bps := f * mult
	if bps < 1000 || bps > MaxRate {
		return 0, errors.New("want 1kbit to 100gbit, or unlimited")
	}
	return int64(math.Round(bps)), nil
}

// percent reads "1%" or "0.5%" as a fraction in [0,1]; open excludes 1.
func percent(v string, open bool) (float64, error) {
	num, ok := strings.CutSuffix(v, "%")
	if !ok {
		return 0, errors.New("want a percentage with %, e.g. 1% or 0.5%")
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || !(f >= 0 && f <= 100) || (open && f == 100) {
		return 0, errors.New("want a percentage from 0% to 100%")
	}
	return f / 100, nil
}

// gemodel reads P/R/BAD/GOOD (each a percentage; BAD and GOOD optional,
// 100% and 0%), netem's "gemodel p r 1-h 1-k".
func gemodel(v string) (Loss, error) {
	parts := strings.Split(v, "/")
	if len(parts) < 2 || len(parts) > 4 {
		return Loss{}, errors.New("want P/R[/BAD[/GOOD]] as percentages, e.g. 1%/30%/100%/0%")
	}
	f := []float64{0, 0, 1, 0}
	for i, p := range parts {
		x, err := percent(strings.TrimSpace(p), false)
		if err != nil {
			return Loss{}, fmt.Errorf("ge's %s: %w", []string{"P", "R", "BAD", "GOOD"}[i], err)
		}
		f[i] = x
	}
	if f[0] > 0 && f[1] == 0 {
		return Loss{}, errors.New("ge's R (bad → good) is 0%: the link would stay bad for ever")
	}
	return Loss{P: f[0], R: f[1], BadLoss: f[2], GoodLoss: f[3]}, nil
}

// MaxQueue bounds a queue: packets or bytes.
const (
	MaxQueuePackets = 1 << 20
	MaxQueueBytes   = 1 << 30
)

// queue reads packets (100, 100p, 100pkt) or bytes (64kb, 64kib, 1mb).
func queue(v string) (bytes, packets int, err error) {
	l := strings.ToLower(v)
	mult := 0
	for _, u := range []struct {
		suffix string
		m      int
	}{{"packets", -1}, {"pkt", -1}, {"p", -1}, {"kib", 1 << 10}, {"mib", 1 << 20}, {"kb", 1000}, {"mb", 1000_000}, {"b", 1}} {
		if strings.HasSuffix(l, u.suffix) {
			l, mult = strings.TrimSuffix(l, u.suffix), u.m
			break
		}
	}
	n, e := strconv.ParseFloat(l, 64)
	switch {
	case e != nil || math.IsNaN(n):
		return 0, 0, errors.New("want packets (100 or 100p) or bytes (64kb, 64kib, 1mb)")
	case mult <= 0:
		if n != math.Trunc(n) || n < 1 || n > MaxQueuePackets {
			return 0, 0, fmt.Errorf("want 1 to %d packets", MaxQueuePackets)
		}
		return 0, int(n), nil
	}
	b := n * float64(mult)
	if b < 1500 || b > MaxQueueBytes {
		return 0, 0, fmt.Errorf("want 1500 bytes (one full packet) to %d bytes", MaxQueueBytes)
	}
	return int(b), 0, nil
}

// didYouMean suggests the key or preset closest to a mistyped one.
func didYouMean(k string) string {
	cands := append([]string{"rtt", "delay", "jitter", "reorder", "rate", "up", "down", "loss", "burst", "ge", "queue", "seed"}, PresetNames()...)
	best, bestD := "", 3
	for _, c := range cands {
		if d := typo.Distance(k, c); d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" {
		return ""
	}
	return "; did you mean " + best + "?"
}

// String is the spec in Parse's language with every value explicit (a
// preset's too, its name dropped); Parse(s.String()) gives the same link.
func (s Spec) String() string {
	var items []string
	if s.Delay != 0 {
		if s.Delay%time.Microsecond == 0 {
			items = append(items, "rtt="+(2*s.Delay).String())
		} else {
			items = append(items, "delay="+s.Delay.String())
		}
	}
	if s.Jitter != 0 {
		items = append(items, "jitter="+s.Jitter.String())
	}
	if s.Reorder {
		items = append(items, "reorder")
	}
	if s.Up == s.Down && s.Up != 0 {
		items = append(items, "rate="+FormatRate(s.Up))
	} else {
		if s.Up != 0 {
			items = append(items, "up="+FormatRate(s.Up))
		}
		if s.Down != 0 {
			items = append(items, "down="+FormatRate(s.Down))
		}
	}
	l := s.Loss
	switch {
	case l.Zero():
	case l.P == 0:
		items = append(items, "loss="+pct(l.GoodLoss))
	case l.BadLoss == 1 && l.GoodLoss == 0 && l.R > 0 && l.Rate() <= 0.5:
		// The simple Gilbert model, as loss= and burst= make it.
		items = append(items, "loss="+pct(round6(l.Rate())), "burst="+strconv.FormatFloat(round6(1/l.R), 'g', -1, 64))
	default:
		items = append(items, fmt.Sprintf("ge=%s/%s/%s/%s", pct(l.P), pct(l.R), pct(l.BadLoss), pct(l.GoodLoss)))
	}
	if s.QueueBytes != 0 {
		items = append(items, fmt.Sprintf("queue=%db", s.QueueBytes))
	}
	if s.QueuePackets != 0 {
		items = append(items, fmt.Sprintf("queue=%dp", s.QueuePackets))
	}
	if s.Seed != 0 {
		items = append(items, fmt.Sprintf("seed=%d", s.Seed))
	}
	if len(items) == 0 {
		return "rtt=0s"
	}
	return strings.Join(items, ",")
}

func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }

func pct(x float64) string { return strconv.FormatFloat(x*100, 'g', -1, 64) + "%" }

// FormatRate is a rate in tc's units, the largest that keeps it whole
// when it can: 2mbit, 768kbit, 1.6mbit.
func FormatRate(bps int64) string {
	if bps == 0 {
		return "unlimited"
	}
	for _, u := range []struct {
		name string
		m    int64
	}{{"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}} {
		if bps >= u.m {
			return strconv.FormatFloat(float64(bps)/float64(u.m), 'g', -1, 64) + u.name
		}
	}
	return strconv.FormatInt(bps, 10) + "bit"
}

// PresetNames are the presets' names, sorted.
func PresetNames() []string {
	names := make([]string, 0, len(presets()))
	for n := range presets() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
