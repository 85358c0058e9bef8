package results

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMergeInputsWaits: a segment missing past the wait is ErrIncomplete
// saying how long it waited; one that appears while it waits is merged,
// with the segments' thresholds and the extra ones, each once.
func TestMergeInputsWaits(t *testing.T) {
	dir := t.TempDir()
	seg := func(i int) *Load {
		l := segmentOf(i, 2)
		l.Requests, l.Status["200"], l.Ops[0].Requests = 5, 5, 5
		for range 5 {
			l.Latency.Record(time.Millisecond)
			l.Ops[0].Latency.Record(time.Millisecond)
		}
		return l
	}
	write := func(i int) {
		if err := WriteFile(filepath.Join(dir, "segment-"+string(rune('0'+i))+".json"), true, seg(i).WriteJSON); err != nil {
			t.Fatal(err)
		}
	}
	write(1)
	_, _, _, err := MergeInputs(context.Background(), nil, []string{dir}, MergeOptions{Wait: 10 * time.Millisecond})
	if !errors.Is(err, ErrIncomplete) || !strings.Contains(err.Error(), "after waiting 10ms") {
		t.Fatalf("one of two segments: %v, want ErrIncomplete after waiting 10ms", err)
	}
	go func() { time.Sleep(100 * time.Millisecond); write(2) }()
	m, ths, notes, err := MergeInputs(context.Background(), nil, []string{dir}, MergeOptions{Wait: time.Minute, Thresholds: []string{"p99<50ms", "errors<1%"}})
	if err != nil {
		t.Fatal(err)
	}
	if m.Requests != 2*seg(1).Requests || len(ths) != 2 || len(notes) != 0 {
		t.Fatalf("merged %d requests, thresholds %v, notes %q", m.Requests, ths, notes)
	}
}
