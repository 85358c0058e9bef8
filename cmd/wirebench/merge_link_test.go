package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/results"
)

// TestMergeReportsTheLink: the segments of a test run with --link merge
// into a file whose summary and report state the link — each segment's
// calibration, the relays' drops summed, the relay that limited one
// segment flagged with the report's warning — so that the link's delay is
// not read as the server's latency; segments across other links, or some
// on loopback, are refused, both files and both links named. (The load
// runs are on loopback, their files given the link load --link records:
// the link itself needs root and is tested in link_test.go.)
func TestMergeReportsTheLink(t *testing.T) {
	t.Parallel()
	url := quietServer(t)
	dir := t.TempDir()
	// relink gives the result in path the link l, as load --link records it.
	relink := func(path string, l *results.Link) string {
		t.Helper()
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		r, err := results.ReadLoad(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		r.Link = l
		if err := results.WriteFile(path, true, r.WriteJSON); err != nil {
			t.Fatal(err)
		}
		return path
	}
	seg := func(i int, l *results.Link) string {
		t.Helper()
		path := filepath.Join(dir, fmt.Sprintf("s%d.json", i))
		if code, _, errs := runCLI(t, "load", "-q", "-n", "10", "-c", "2", "--segment", fmt.Sprintf("%d/2", i), "--out", path, url); code != 0 {
			t.Fatalf("segment %d: exit %d\n%s", i, code, errs)
		}
		return relink(path, l)
	}
	link := func(rtt time.Duration, relay *results.LinkRelay) *results.Link {
		return &results.Link{Spec: "rtt=30ms,loss=1%", Effective: "rtt=30ms,loss=1%", Relay: relay, Calibration: &results.LinkCalibration{
			RTTExpected: 30 * time.Millisecond, RTTUDP: rtt, RTTUDPMedian: rtt + 60*time.Microsecond, LossSet: 0.01, LossUp: 0.0088, LossDown: 0.0112}}
	}
	s1 := seg(1, link(30540*time.Microsecond, &results.LinkRelay{UpPackets: 40, DownPackets: 40, UpLost: 1, DownQueueDrops: 2, CPUPerPacket: 3 * time.Microsecond}))
	s2 := seg(2, link(30710*time.Microsecond, &results.LinkRelay{UpPackets: 40, DownPackets: 40, DownLost: 1, KernelDrops: 1474, CPUPerPacket: 5 * time.Microsecond,
		Limited: "the kernel dropped 1474 packets (0 up, 1474 down) at the TUN devices' queues before the relay read them"}))
	merged := filepath.Join(dir, "merged.json")
	code, out, errs := runCLI(t, "merge", "--out", merged, s1, s2)
	if code != 0 {
		t.Fatalf("merge: exit %d\n%s", code, errs)
	}
	for _, want := range []string{"link: rtt=30ms,loss=1%", "merged from 2 runs", "segment 2/2", "measured 30.71ms UDP",
		"all runs  up 80 packets", "set the pace (segment 2/2: the kernel dropped 1474"} {
		if !strings.Contains(out, want) {
			t.Errorf("merge's summary: no %q in:\n%s", want, out)
		}
	}
	for _, format := range []string{"md", "html"} {
		code, out, errs := runCLI(t, "report", "--format", format, merged)
		if code != 0 {
			t.Fatalf("report --format %s: exit %d\n%s", format, code, errs)
		}
		for _, want := range []string{
			"rtt=30ms,loss=1% (segment 1/2)", "30.54ms / 30.60ms", "1.00% → 0.88% / 1.12%", "3.000µs", "1 · 2 · 0",
			"rtt=30ms,loss=1% (segment 2/2)", "30.71ms / 30.77ms", "5.000µs", "1 · 0 · 1,474", "YES: the kernel dropped 1474",
			"rtt=30ms,loss=1% (all segments)", "4.000µs", "2 · 2 · 1,474", "YES: segment 2/2: the kernel dropped 1474",
			"set the pace (segment 2/2: the kernel dropped 1474"} {
			if !strings.Contains(out, want) {
				t.Errorf("report --format %s: no %q in:\n%s", format, want, out)
			}
		}
	}

	other := link(30*time.Millisecond, nil)
	other.Spec, other.Effective = "3g", "rtt=300ms,up=768kbit,down=1.6mbit"
	for _, tc := range []struct {
		name string
		link *results.Link
		want string
	}{
		{"other link", other, `run on link "3g" (rtt=300ms,up=768kbit,down=1.6mbit), with ` + s1 + `, run on link "rtt=30ms,loss=1%"`},
		{"loopback", nil, `run on loopback (no --link), with ` + s1 + `, run on link "rtt=30ms,loss=1%"`},
	} {
		relink(s2, tc.link)
		code, _, errs := runCLI(t, "merge", s1, s2)
		if want := "wirebench merge: bad result: cannot merge " + s2 + ", " + tc.want; code != 1 || !strings.Contains(errs, want) {
			t.Errorf("%s: exit %d, want 1 and %q in:\n%s", tc.name, code, want, errs)
		}
	}
}
