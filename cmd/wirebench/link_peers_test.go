package main

import (
	"math"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
)

// TestPeerLinkPing: the link's round trip as ping (iputils), a tool
// nobody here wrote, measures it from the far side: ICMP echo to the
// near side's address through `wirebench link SPEC -- ping …`. Every
// echo comes back; none faster than the set RTT (the relay never
// delivers early); the median within ±0.5 ms or ±2% of it, whichever is
// larger (the accuracy goal); and nothing is left behind.
func TestPeerLinkPing(t *testing.T) {
	testkit.NeedPeers(t)
	needRoot(t)
	ping := testkit.NeedTool(t, "ping", "apt-get install -y iputils-ping")
	bin := testkit.Binary(t)
	defer loadLock(t)()
	before := ifaceNames(t)
	const count = 100
	for _, rtt := range []time.Duration{2 * time.Millisecond, 20 * time.Millisecond, 100 * time.Millisecond} {
		spec := "rtt=" + rtt.String()
		// -i 0.01: 100 echoes in a second or so, several in flight at
		// 100 ms; -W 2: a lost echo is waited for, not forever.
		cmd := exec.Command(bin, "link", spec, "--link-calibrate=false", "--",
			"sh", "-c", `exec "$0" -n -c `+strconv.Itoa(count)+` -i 0.01 -W 2 "$WIREBENCH_LINK_HOST"`, ping)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", spec, err, out)
		}
		var rtts []float64 // ms
		for _, m := range regexp.MustCompile(`time=([0-9.]+) ms`).FindAllSubmatch(out, -1) {
			v, _ := strconv.ParseFloat(string(m[1]), 64)
			rtts = append(rtts, v)
		}
		if len(rtts) != count {
			t.Fatalf("%s: %d echo replies of %d\n%s", spec, len(rtts), count, out)
		}
		slices.Sort(rtts)
		set := float64(rtt) / 1e6
		lo, med := rtts[0], rtts[count/2]
		tol := math.Max(0.5, 0.02*set)
		t.Logf("%s: ping min %.3f, median %.3f, max %.3f ms (tolerance ±%.2f ms)", spec, lo, med, rtts[count-1], tol)
		if lo < set-0.01 {
			t.Errorf("%s: an echo came back in %.3f ms, faster than the link's round trip", spec, lo)
		}
		if math.Abs(med-set) > tol {
			t.Errorf("%s: median ping RTT %.3f ms, off the set %.0f ms by more than %.2f ms", spec, med, set, tol)
		}
	}
	if after := ifaceNames(t); !slices.Equal(before, after) {
		t.Errorf("interfaces before %v, after %v: the link left a device behind", before, after)
	}
}
