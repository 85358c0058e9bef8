package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/results"
)

// TestCompareSaysTheLinks: two runs on different links are said to be,
// and runs on loopback say nothing of links.
func TestCompareSaysTheLinks(t *testing.T) {
	old, new := capLoad(100, time.Millisecond), capLoad(100, time.Millisecond)
	var b bytes.Buffer
	if err := writeRunCompare(&b, "old", "new", old, new); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "link") {
		t.Errorf("loopback runs mention a link:\n%s", b.String())
	}
	new.Link = &results.Link{Spec: "3g", Effective: "rtt=300ms,up=768kbit,down=1.6mbit", Preset: "3g"}
	b.Reset()
	if err := writeRunCompare(&b, "old", "new", old, new); err != nil {
		t.Fatal(err)
	}
	if want := "link: old loopback, new 3g (rtt=300ms,up=768kbit,down=1.6mbit): different links"; !strings.Contains(b.String(), want) {
		t.Errorf("want %q in:\n%s", want, b.String())
	}
	// A run the relay limited says so beside the comparison too.
	new.Link.Relay = &results.LinkRelay{Limited: "its threads used 97% of a CPU"}
	b.Reset()
	if err := writeRunCompare(&b, "old", "new", old, new); err != nil {
		t.Fatal(err)
	}
	if want := "the new run: the link's relay, not the emulated link, set the pace (its threads used 97% of a CPU)"; !strings.Contains(b.String(), want) {
		t.Errorf("want %q in:\n%s", want, b.String())
	}
}

// TestSingleRunReportShowsItsLink: the report of a load or capacity --out
// file run with --link states the link and its calibration beside the
// spec, in Markdown and HTML (it said nothing of the link: a 30-ms p50
// read as the server's).
func TestSingleRunReportShowsItsLink(t *testing.T) {
	lk := &results.Link{Spec: "rtt=30ms,loss=1%", Effective: "rtt=30ms,loss=1%", Calibration: &results.LinkCalibration{
		RTTExpected: 30 * time.Millisecond, RTTUDP: 30540 * time.Microsecond, RTTUDPMedian: 30600 * time.Microsecond, LossSet: 0.01, LossUp: 0.0088}}
	for name, out := range linkReports(t, lk, nil) {
		for _, want := range []string{"rtt=30ms,loss=1%", "30.54ms / 30.60ms", "1.00% → 0.88%"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: no %q in:\n%s", name, want, out)
			}
		}
	}
}

// linkReports is the report of a load and of a capacity --out file run
// on link lk, in Markdown and in HTML, by "load, markdown" and the like;
// the capacity result is kept in *search when search is not nil.
func linkReports(t *testing.T, lk *results.Link, search **results.Capacity) map[string]string {
	t.Helper()
	load := capLoad(100, 31*time.Millisecond)
	load.Link = lk
	capacity := capSearch(500, time.Millisecond)
	capacity.Link = lk
	if search != nil {
		*search = capacity
	}
	out := map[string]string{}
	for name, r := range map[string]*results.Study{"load": results.FromLoad(load), "capacity": results.FromCapacity(capacity)} {
		var md, html bytes.Buffer
		if err := WriteMarkdown(&md, Build(r)); err != nil {
			t.Fatal(err)
		}
		if err := WriteHTML(&html, Build(r)); err != nil {
			t.Fatal(err)
		}
		out[name+", markdown"], out[name+", html"] = md.String(), html.String()
	}
	return out
}

// TestLinksTableShowsTheRelay: the Links table of a load or capacity
// --out file run with --link shows what the relay did over the run — its
// CPU per packet, the packets dropped by cause (the link's loss, its
// queue, the kernel before the relay read them) and whether it limited
// the run — and a run the relay limited carries the study's warning; a
// study's row sums its trials' drops.
func TestLinksTableShowsTheRelay(t *testing.T) {
	relay := &results.LinkRelay{UpPackets: 900, DownPackets: 1200, UpLost: 9, DownLost: 12, UpQueueDrops: 3, DownQueueDrops: 4,
		KernelDrops: 1474, CPUPerPacket: 3200 * time.Nanosecond, Late: 2 * time.Millisecond,
		Limited: "the kernel dropped 1474 packets (0 up, 1474 down) at the TUN devices' queues before the relay read them"}
	lk := &results.Link{Spec: "rtt=30ms,loss=1%", Effective: "rtt=30ms,loss=1%", Relay: relay}
	var search *results.Capacity
	for name, out := range linkReports(t, lk, &search) {
		for _, want := range []string{"relay CPU/packet (the run)", "3.200µs", "dropped: link loss · queue · kernel", "21 · 7 · 1,474",
			"YES: the kernel dropped 1474 packets", "the link&#39;s relay, not the emulated link, set the pace"} {
			if strings.HasSuffix(name, "markdown") {
				want = strings.ReplaceAll(want, "&#39;", "'")
			}
			if !strings.Contains(out, want) {
				t.Errorf("%s: no %q in:\n%s", name, want, out)
			}
		}
	}
	if search.Warnings != nil {
		t.Errorf("FromCapacity wrote its warning into the capacity result: %q", search.Warnings)
	}

	// A study: each trial's relay on its cell's link, drops summed.
	s := &results.Study{Links: []results.Link{{Spec: "3g", Effective: "rtt=300ms,up=768kbit,down=1.6mbit"}},
		Cells: []results.Cell{{ID: "a", Group: "g", Link: "3g", Baseline: true}}}
	for i := range 2 {
		s.Trials = append(s.Trials, results.Trial{Cell: "a", Index: i, Load: capLoad(100, time.Millisecond),
			Relay: &results.LinkRelay{UpLost: 1, DownQueueDrops: 2, KernelDrops: int64(3 * i), CPUPerPacket: time.Duration(i+1) * time.Microsecond, Limited: []string{"", "late"}[i]}})
	}
	tb := linksTable(s)
	if got := strings.Join(tb.Rows[0][7:], " | "); got != "1.500µs | 2 · 4 · 3 | 1 of 2" {
		t.Errorf("study's links row ends %q; want 1.500µs | 2 · 4 · 3 | 1 of 2", got)
	}
}
