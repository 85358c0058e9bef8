package link

import (
	"sync"
	"time"
)

// A preset is a named link and where its numbers come from (docs/network.md
// lists them).
type preset struct {
	Spec
	Source string
}

const mbit = 1_000_000

// presets: the access networks are WebPageTest's connectivity profiles
// (www/settings/connectivity.ini.sample and its 4G/LTE entries), which
// many web-performance tools copy; the others are set from physics and
// are said to be ours. Made on first use, not at init: 2 kB of live heap
// in every process of the one binary otherwise, emulating a link or not.
var presets = sync.OnceValue(func() map[string]*preset {
	return map[string]*preset{
		"3g": {Spec{Delay: 150 * time.Millisecond, Down: 1_600_000, Up: 768_000},
			"WebPageTest \"Mobile 3G\": 1.6 Mbit/s down, 768 kbit/s up, 300 ms RTT"},
		"3g-slow": {Spec{Delay: 100 * time.Millisecond, Down: 780_000, Up: 330_000},
			"WebPageTest \"Mobile 3G - Slow\": 780 kbit/s down, 330 kbit/s up, 200 ms RTT"},
		"4g": {Spec{Delay: 85 * time.Millisecond, Down: 9 * mbit, Up: 9 * mbit},
			"WebPageTest \"4G\": 9 Mbit/s each way, 170 ms RTT"},
		"lte": {Spec{Delay: 35 * time.Millisecond, Down: 12 * mbit, Up: 12 * mbit},
			"WebPageTest \"LTE\": 12 Mbit/s each way, 70 ms RTT"},
		"lte-lossy": {Spec{Delay: 35 * time.Millisecond, Down: 12 * mbit, Up: 12 * mbit, Jitter: 5 * time.Millisecond, Loss: Bursty(0.02, 3)},
			"WebPageTest \"LTE\" with 2% loss in bursts of 3 packets and 5 ms jitter (ours: a poor cell edge)"},
		"cable": {Spec{Delay: 14 * time.Millisecond, Down: 5 * mbit, Up: 1 * mbit},
			"WebPageTest \"Cable\": 5 Mbit/s down, 1 Mbit/s up, 28 ms RTT"},
		"dsl": {Spec{Delay: 25 * time.Millisecond, Down: 1_500_000, Up: 384_000},
			"WebPageTest \"DSL\": 1.5 Mbit/s down, 384 kbit/s up, 50 ms RTT"},
		"satellite": {Spec{Delay: 300 * time.Millisecond, Down: 10 * mbit, Up: 2 * mbit},
			"geostationary: 4 × 35,786 km at the speed of light is 477 ms, ~600 ms RTT with the ground segment; 10/2 Mbit/s (ours)"},
		"transatlantic": {Spec{Delay: 37500 * time.Microsecond},
			"London–New York: ~5,600 km of fibre at 2/3 c is 56 ms; ~75 ms RTT as routed; unlimited rate (ours)"},
		"datacenter": {Spec{Delay: 250 * time.Microsecond},
			"two hosts in one data centre: 0.5 ms RTT, unlimited rate (ours)"},
	}
})

// PresetSource is where a preset's numbers come from, "" for no preset.
func PresetSource(name string) string {
	if p := presets()[name]; p != nil {
		return p.Source
	}
	return ""
}
