package results

import (
	"fmt"
	"io"
)

// KV is what a key-value load (the kv-* scenarios) measured beside its
// requests: the key distribution's hot keys and the traffic they took,
// and what its GETs found.
type KV struct {
	KeyDist string `json:"key_dist"` // uniform, sequential, gaussian:…, zipf:0.99
	Keys    int64  `json:"keys"`     // the key space's size
	Seed    uint64 `json:"seed"`
	// Requests are the commands sent, HotRequests those on the hot keys:
	// the HotKeys keys the distribution makes the most likely (the top
	// 1%; none for uniform keys), expected to take ExpectedHotShare.
	Requests int64 `json:"requests"`
	// AbsentRequests are the GETs of keys never written (--miss-ratio's
	// nokey:…): commands outside the key space, on no hot key, and left
	// out of the hot share.
	AbsentRequests   int64   `json:"absent_requests,omitempty"`
	HotKeys          int64   `json:"hot_keys,omitempty"`
	HotRequests      int64   `json:"hot_requests,omitempty"`
	ExpectedHotShare float64 `json:"expected_hot_share,omitempty"`
	// Gets are the GETs answered, Hits those that found a value and
	// Misses those that found none (whether or not that was a failure).
	Gets   int64 `json:"gets"`
	Hits   int64 `json:"hits"`
	Misses int64 `json:"misses"`
}

// HotShare is the measured share of the commands on the key space that
// went to hot keys (0 without any): as the server's per-key counts show it.
func (k *KV) HotShare() float64 {
	if n := k.Requests - k.AbsentRequests; n > 0 {
		return float64(k.HotRequests) / float64(n)
	}
	return 0
}

// HitRatio is the share of answered GETs that found a value; ok is false
// when no GET was answered.
func (k *KV) HitRatio() (r float64, ok bool) {
	if k.Gets == 0 {
		return 0, false
	}
	return float64(k.Hits) / float64(k.Gets), true
}

// mergeKV sums the segments' KV sections if every segment has one of the
// same distribution; else the merge has none (a sum over some segments
// would misstate the ratios).
func mergeKV(rs []*Load) *KV {
	first := rs[0].KV
	if first == nil {
		return nil
	}
	m := &KV{KeyDist: first.KeyDist, Keys: first.Keys, Seed: first.Seed, HotKeys: first.HotKeys, ExpectedHotShare: first.ExpectedHotShare}
	for _, r := range rs {
		k := r.KV
		if k == nil || k.KeyDist != first.KeyDist || k.Keys != first.Keys {
			return nil
		}
		m.Requests += k.Requests
		m.HotRequests += k.HotRequests
		m.AbsentRequests += k.AbsentRequests
		m.Gets += k.Gets
		m.Hits += k.Hits
		m.Misses += k.Misses
	}
	return m
}

// WriteKVSummary prints what a key-value run adds to the summary: the
// key distribution, the hot keys' share of the commands against the
// share expected, and the GETs' hit ratio. It prints nothing for other
// runs.
func WriteKVSummary(w io.Writer, r *Load) error {
	k := r.KV
	if k == nil {
		return nil
	}
	ew := &errWriter{w: w}
	ew.printf("\n  keys          %s over %d keys, seed %d\n", k.KeyDist, k.Keys, k.Seed)
	if k.HotKeys > 0 {
		aside := ""
		if k.AbsentRequests > 0 {
			aside = fmt.Sprintf(" on the key space, %d GETs of absent keys aside", k.AbsentRequests)
		}
		ew.printf("  hot keys      the top %d took %.1f%% of %d commands%s (expected %.1f%%)\n",
			k.HotKeys, 100*k.HotShare(), k.Requests-k.AbsentRequests, aside, 100*k.ExpectedHotShare)
	}
	if hr, ok := k.HitRatio(); ok {
		ew.printf("  GET hits      %.2f%% (%d of %d; %d missed)\n", 100*hr, k.Hits, k.Gets, k.Misses)
	}
	return ew.err
}
