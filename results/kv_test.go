package results

import (
	"strings"
	"testing"
)

// TestKVMergeAndSummary: segments' KV sections sum, a segment without
// one (or of another distribution) drops the merged section, and the
// summary states the hot share and the hit ratio.
func TestKVMergeAndSummary(t *testing.T) {
	a := &KV{KeyDist: "zipf:0.99", Keys: 1000, Seed: 1, HotKeys: 10, ExpectedHotShare: 0.5, Requests: 100, HotRequests: 40, Gets: 50, Hits: 45, Misses: 5}
	b := *a
	b.HotRequests, b.Hits, b.Misses = 60, 50, 0
	m := mergeKV([]*Load{{KV: a}, {KV: &b}})
	if m == nil || m.Requests != 200 || m.HotRequests != 100 || m.Gets != 100 || m.Hits != 95 || m.Misses != 5 || m.HotShare() != 0.5 {
		t.Fatalf("merged %+v", m)
	}
	if hr, ok := m.HitRatio(); !ok || hr != 0.95 {
		t.Errorf("hit ratio %v %v", hr, ok)
	}
	c := *a
	c.KeyDist = "uniform"
	if mergeKV([]*Load{{KV: a}, {}}) != nil || mergeKV([]*Load{{KV: a}, {KV: &c}}) != nil || mergeKV([]*Load{{}, {KV: a}}) != nil {
		t.Errorf("a partial or mixed merge kept a KV section")
	}
	var sb strings.Builder
	if err := WriteKVSummary(&sb, &Load{KV: m}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"zipf:0.99 over 1000 keys, seed 1", "the top 10 took 50.0% of 200 commands (expected 50.0%)", "GET hits      95.00% (95 of 100; 5 missed)"} {
		if !strings.Contains(sb.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, sb.String())
		}
	}
	sb.Reset()
	if WriteKVSummary(&sb, &Load{}); sb.Len() != 0 {
		t.Errorf("a run without KV section printed %q", sb.String())
	}
}
