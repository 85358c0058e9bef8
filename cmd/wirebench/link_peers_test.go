package main

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
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

// TestPeerLinkLossNft: the link's random loss against the kernel's own,
// counted by tools nobody here wrote. 2,000 pings (iputils) from the far
// side cross a link twice: once through `loss=5%` (the relay drops 5% each
// way), once through a lossless link while nftables drops 5% of what each
// receiver takes from it (`numgen random mod 100 < 5` on the input hook:
// the far namespace's from wblink, the host's from the near TUN, as
// bench/h3-loss.sh drops on loopback; on the sender's output hook a drop is
// an EPERM to ping, not a loss). An echo comes back with probability
// 0.95² each time: ping's received fraction within four standard errors of
// 90.25% on both, so within about ±2.7 points, and nftables' and the
// relay's own counts of dropped packets each within four of 5%. A relay
// that dropped one way only (95% back) fails. The counts are of packets,
// not of time: a busy machine slows the pings, it does not change them.
func TestPeerLinkLossNft(t *testing.T) {
	testkit.NeedPeers(t)
	needRoot(t)
	ping := testkit.NeedTool(t, "ping", "apt-get install -y iputils-ping")
	testkit.NeedTool(t, "nft", "apt-get install -y nftables")
	testkit.NeedTool(t, "nsenter", "apt-get install -y util-linux")
	bin := testkit.Binary(t)
	defer loadLock(t)()
	before := ifaceNames(t)
	const count, loss = 2000, 0.05
	table := fmt.Sprintf("wbtest%d", os.Getpid())
	t.Cleanup(func() { exec.Command("nft", "delete", "table", "inet", table).Run() })
	hostNS := fmt.Sprintf("/proc/%d/ns/net", os.Getpid())
	pingCmd := `"$PING" -n -q -c ` + strconv.Itoa(count) + ` -i 0.002 -W 2 "$WIREBENCH_LINK_HOST"`
	// rules DEV: drop 5% of the packets in from DEV, counting those seen
	// and those dropped.
	const rules = `rules() { printf 'table inet %s {\n chain in { type filter hook input priority 0; iifname "%s" counter; iifname "%s" numgen random mod 100 < 5 counter drop; }\n}\n' "$TABLE" "$1" "$1"; }
dev=$(nsenter --net="$HOSTNS" ip -o addr show to "$WIREBENCH_LINK_HOST" | awk '{print $2}')
rules wblink | nft -f - && rules "$dev" | nsenter --net="$HOSTNS" nft -f - || exit 1
`
	const counters = `
echo "nft down: $(nft list table inet "$TABLE" | grep -o 'counter packets [0-9]*' | tr '\n' ' ')"
echo "nft up: $(nsenter --net="$HOSTNS" nft list table inet "$TABLE" | grep -o 'counter packets [0-9]*' | tr '\n' ' ')"
nsenter --net="$HOSTNS" nft delete table inet "$TABLE"
`
	for _, c := range []struct{ name, spec, script string }{
		{"link", "rtt=2ms,loss=5%,seed=3", pingCmd},
		{"nft", "rtt=2ms", rules + pingCmd + counters},
	} {
		cmd := exec.Command(bin, "link", c.spec, "--link-calibrate=false", "--", "sh", "-c", c.script)
		cmd.Env = append(os.Environ(), "PING="+ping, "TABLE="+table, "HOSTNS="+hostNS)
		out, err := cmd.CombinedOutput()
		// ping exits 1 when some echoes went unanswered, as they must here.
		if err != nil && cmd.ProcessState.ExitCode() != 1 {
			t.Fatalf("%s: %v\n%s", c.name, err, out)
		}
		m := regexp.MustCompile(`(\d+) packets transmitted, (\d+) received`).FindSubmatch(out)
		if m == nil {
			t.Fatalf("%s: no ping summary\n%s", c.name, out)
		}
		sent, got := atof(m[1]), atof(m[2])
		back := got / sent
		within(t, c.name+": echoes back", back, (1-loss)*(1-loss), sent)
		var drops [][]float64 // each way: seen, dropped
		if c.name == "link" {
			for _, m := range regexp.MustCompile(`(up|down) (\d+)(?: packets)? \((\d+) lost`).FindAllSubmatch(out, -1) {
				drops = append(drops, []float64{atof(m[2]), atof(m[3])})
			}
		} else {
			for _, m := range regexp.MustCompile(`nft (?:up|down): counter packets (\d+) counter packets (\d+)`).FindAllSubmatch(out, -1) {
				drops = append(drops, []float64{atof(m[1]), atof(m[2])})
			}
		}
		if len(drops) != 2 {
			t.Fatalf("%s: want the dropped packets counted each way\n%s", c.name, out)
		}
		for i, d := range drops {
			within(t, fmt.Sprintf("%s: dropped way %d (%.0f of %.0f)", c.name, i, d[1], d[0]), d[1]/d[0], loss, d[0])
		}
		t.Logf("%s: %.0f of %.0f echoes back (%.2f%%)", c.name, got, sent, 100*back)
	}
	if after := ifaceNames(t); !slices.Equal(before, after) {
		t.Errorf("interfaces before %v, after %v: the link left a device behind", before, after)
	}
	if out, _ := exec.Command("nft", "list", "tables").Output(); strings.Contains(string(out), table) {
		t.Errorf("nft table %s left behind", table)
	}
}

func atof(b []byte) float64 { v, _ := strconv.ParseFloat(string(b), 64); return v }

// within fails the test when the fraction got, over n trials, is more
// than four standard errors off want.
func within(t *testing.T, what string, got, want, n float64) {
	t.Helper()
	tol := 4 * math.Sqrt(want*(1-want)/n)
	if n < 100 || math.Abs(got-want) > tol {
		t.Errorf("%s: %.2f%% over %.0f, want %.2f%% ± %.2f", what, 100*got, n, 100*want, 100*tol)
	}
}
