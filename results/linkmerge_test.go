package results

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// onLink is segment i of n run across the link spec (effective eff),
// calibrated and with its relay's figures, as load --link --out writes it.
func onLink(i, n int, spec, eff string, rtt time.Duration, relay *LinkRelay) *Load {
	r := segmentOf(i, n)
	r.Link = &Link{Spec: spec, Effective: eff, Calibration: &LinkCalibration{RTTExpected: 30 * time.Millisecond, RTTUDP: rtt, RTTUDPMedian: rtt + 50*time.Microsecond},
		Relay: relay}
	return r
}

// TestMergeKeepsTheLink: segments run across one link merge into a
// result that states it: the spec, each segment's calibration (no one
// of them the whole's), the relays' counters summed, CPU per packet and
// lateness weighted by packets, and a relay that limited one segment
// limits the merge, with the warning a report shows. A merge of a merge
// keeps every segment; a segment without relay figures leaves no sum
// but still warns.
func TestMergeKeepsTheLink(t *testing.T) {
	t.Parallel()
	r1 := &LinkRelay{UpPackets: 100, UpBytes: 10_000, UpLost: 1, UpQueueDrops: 2, DownPackets: 300, DownBytes: 90_000, DownLost: 3, DownQueueDrops: 4,
		KernelDrops: 5, CPUPerPacket: 2 * time.Microsecond, Late: 10 * time.Microsecond}
	r2 := &LinkRelay{UpPackets: 300, UpBytes: 30_000, DownPackets: 900, DownBytes: 270_000, DownLost: 10,
		KernelDrops: 7, CPUPerPacket: 6 * time.Microsecond, Late: 2 * time.Millisecond, Limited: "packets left 2ms late on average"}
	s1 := onLink(1, 3, "3g", "rtt=300ms,up=768kbit,down=1.6mbit", 30540*time.Microsecond, r1)
	s1.Link.Preset = "3g"
	s2 := onLink(2, 3, "rtt=300ms,up=768kbit,down=1.6mbit", "rtt=300ms,up=768kbit,down=1.6mbit", 30710*time.Microsecond, r2)
	s2.Link.Calibration.Off = "RTT 30.71ms against 30ms set"
	m, err := Merge(throughFile(t, s1), throughFile(t, s2))
	if err != nil {
		t.Fatal(err)
	}
	m = throughFile(t, m) // what merge --out writes reads back whole
	l := m.Link
	if l == nil {
		t.Fatal("the merge has no link")
	}
	if l.Spec != "3g" || l.Preset != "3g" || l.Effective != "rtt=300ms,up=768kbit,down=1.6mbit" || l.Calibration != nil {
		t.Errorf("merged link %q preset %q effective %q, calibration %+v: want the first's spec, no calibration of its own", l.Spec, l.Preset, l.Effective, l.Calibration)
	}
	want := []LinkSegment{{"1/3", s1.Link.Calibration, r1}, {"2/3", s2.Link.Calibration, r2}}
	if !reflect.DeepEqual(l.Segments, want) {
		t.Errorf("segments\n%+v\nwant\n%+v", l.Segments, want)
	}
	sum := LinkRelay{UpPackets: 400, UpBytes: 40_000, UpLost: 1, UpQueueDrops: 2, DownPackets: 1200, DownBytes: 360_000, DownLost: 13, DownQueueDrops: 4,
		KernelDrops:  12,
		CPUPerPacket: 5 * time.Microsecond,                                                  // (400×2 + 1200×6) / 1600
		Late:         time.Duration((390*10_000 + 1190*2_000_000) / 1580 * time.Nanosecond), // weighted by packets delivered
		Limited:      "segment 2/3: packets left 2ms late on average"}
	if l.Relay == nil || *l.Relay != sum {
		t.Errorf("relay %+v\nwant %+v", l.Relay, sum)
	}
	if w := l.Relay.Warning(); !strings.Contains(w, "set the pace (segment 2/3: packets left 2ms late") {
		t.Errorf("warning %q", w)
	}

	// The rest merged in: three segments, the counters of all three.
	s3 := onLink(3, 3, "3g", "rtt=300ms,up=768kbit,down=1.6mbit", 30600*time.Microsecond, &LinkRelay{UpPackets: 1, DownPackets: 2})
	all, err := Merge(m, s3)
	if err != nil {
		t.Fatal(err)
	}
	if segs := all.Link.Segments; len(segs) != 3 || segs[2].Segment != "3/3" || segs[0].Relay.UpPackets != 100 {
		t.Errorf("merge of a merge: segments %+v", segs)
	}
	if r := all.Link.Relay; r.UpPackets != 401 || r.DownPackets != 1202 || r.Limited != sum.Limited {
		t.Errorf("merge of a merge: relay %+v", r)
	}

	// A segment without the relay's figures: no sum, the limit warned.
	s3.Link.Relay = nil
	part, err := Merge(s2, s3)
	if err != nil {
		t.Fatal(err)
	}
	if part.Link.Relay != nil || len(part.Link.Segments) != 2 || part.Link.Segments[1].Calibration == nil {
		t.Errorf("with a segment's relay figures missing: relay %+v, segments %+v", part.Link.Relay, part.Link.Segments)
	}
	if !strings.Contains(strings.Join(part.Warnings, "\n"), "set the pace (segment 2/3: packets left 2ms late") {
		t.Errorf("warnings %q: want the limited segment's", part.Warnings)
	}

	// Loopback segments merge to loopback.
	if lo, err := Merge(segmentOf(1, 2), segmentOf(2, 2)); err != nil || lo.Link != nil {
		t.Errorf("loopback merge: %v, link %+v", err, lo.Link)
	}
}

// TestMergeRefusesOtherLinks: runs across different links, or some on
// loopback, are refused, by Merge and by merge's inputs (checked or not),
// the error naming both runs and both links.
func TestMergeRefusesOtherLinks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		a, b   *Load
		want   []string // in Merge's error
		inputs string   // in MergeInputs'
	}{
		{"other spec", onLink(1, 2, "rtt=30ms", "rtt=30ms", 0, nil), onLink(2, 2, "3g", "rtt=300ms,up=768kbit,down=1.6mbit", 0, nil),
			[]string{`cannot merge result 2, run on link "3g" (rtt=300ms,up=768kbit,down=1.6mbit), with result 1, run on link "rtt=30ms"`},
			`cannot merge b.json, run on link "3g" (rtt=300ms,up=768kbit,down=1.6mbit), with a.json, run on link "rtt=30ms"`},
		{"link then loopback", onLink(1, 2, "rtt=30ms", "rtt=30ms", 0, nil), segmentOf(2, 2),
			[]string{`cannot merge result 2, run on loopback (no --link), with result 1, run on link "rtt=30ms"`},
			`cannot merge b.json, run on loopback (no --link), with a.json, run on link "rtt=30ms"`},
		{"loopback then link", segmentOf(1, 2), onLink(2, 2, "rtt=30ms", "rtt=30ms", 0, nil),
			[]string{`cannot merge result 2, run on link "rtt=30ms", with result 1, run on loopback (no --link)`},
			`cannot merge b.json, run on link "rtt=30ms", with a.json, run on loopback (no --link)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Merge(tc.a, tc.b)
			if !errors.Is(err, ErrLoad) || !strings.Contains(err.Error(), tc.want[0]) {
				t.Errorf("Merge: %v\nwant ErrLoad with %q", err, tc.want[0])
			}
			dir := t.TempDir()
			for name, r := range map[string]*Load{"a.json": tc.a, "b.json": tc.b} {
				f, err := os.Create(filepath.Join(dir, name))
				if err != nil {
					t.Fatal(err)
				}
				if err := r.WriteJSON(f); err != nil {
					t.Fatal(err)
				}
				f.Close()
			}
			files := []string{filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")}
			for _, unchecked := range []bool{false, true} {
				_, _, _, err := MergeInputs(context.Background(), nil, files, MergeOptions{Unchecked: unchecked})
				if want := strings.ReplaceAll(tc.inputs, "a.json", files[0]); !errors.Is(err, ErrLoad) || !strings.Contains(err.Error(), strings.ReplaceAll(want, "b.json", files[1])) {
					t.Errorf("MergeInputs (unchecked %v): %v\nwant ErrLoad with %q", unchecked, err, tc.inputs)
				}
			}
		})
	}
}
