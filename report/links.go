package report

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/wirebench/wirebench/results"
)

// linksTable is a study's links axis, or a single run's link: each link
// as asked for beside the link measured before the trials, and what its
// relay did over the measured runs (the emulator's CPU per packet, the
// packets dropped by cause, and the runs where it, not the link, set the
// pace).
func linksTable(r *results.Study) table {
	cpuHead, limHead := "relay CPU/packet (trials)", "trials the relay limited"
	if r.SingleRun {
		cpuHead, limHead = "relay CPU/packet (the run)", "relay limited the run"
	}
	t := table{Header: []string{"link", "spec", "RTT set", "RTT measured (UDP min / median)", "rate up / down set", "wire rate up / down", "loss set → up / down",
		cpuHead, "dropped: link loss · queue · kernel", limHead}}
	for _, l := range r.Links {
		// A merge's link: each segment's own, as measured and relayed,
		// then the relays' sums over the whole run.
		for _, seg := range l.Segments {
			row := linkRow(l, seg.Calibration)
			row[0] += " (segment " + seg.Segment + ")"
			if seg.Relay != nil {
				relayCells(row, r.SingleRun, []*results.LinkRelay{seg.Relay})
			}
			t.Rows = append(t.Rows, row)
		}
		row := linkRow(l, l.Calibration)
		if len(l.Segments) > 0 {
			row[0] += " (all segments)"
			row[3] = "each segment's, above"
		}
		var relays []*results.LinkRelay
		for _, tr := range r.Trials {
			if tr.Relay != nil && linkOf(r, tr.Cell) == l.Spec {
				relays = append(relays, tr.Relay)
			}
		}
		if len(relays) > 0 {
			relayCells(row, r.SingleRun, relays)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// linkRow is a Links table row of a link as asked for beside c, the link
// measured, with the relay's cells empty.
func linkRow(l results.Link, c *results.LinkCalibration) []string {
	row := []string{l.Spec, l.Effective, "—", "—", "—", "—", "—", "—", "—", "—"}
	if c != nil {
		row[2] = formatDuration(c.RTTExpected)
		row[3] = formatDuration(c.RTTUDP) + " / " + formatDuration(c.RTTUDPMedian)
		row[4] = results.FormatBitRate(float64(c.UpRate)) + " / " + results.FormatBitRate(float64(c.DownRate))
		row[5] = results.FormatBitRate(c.UpWire) + " / " + results.FormatBitRate(c.DownWire)
		row[6] = fmt.Sprintf("%s → %s / %s", pct(c.LossSet), pct(c.LossUp), pct(c.LossDown))
		if c.Off != "" {
			row[3] += " (OFF SPEC: " + c.Off + ")"
		}
	} else if l.Effective != "none" {
		row[3] = "not calibrated"
	}
	return row
}

// relayCells fills row's relay cells with what the relays did over the
// runs: the mean CPU per packet, the drops summed by cause, and the runs
// the relay limited (for a single run, whether it did and why).
func relayCells(row []string, single bool, relays []*results.LinkRelay) {
	var cpu time.Duration
	var limited int
	var lost, queue, kernel int64
	why := ""
	for _, r := range relays {
		cpu += r.CPUPerPacket
		lost += r.UpLost + r.DownLost
		queue += r.UpQueueDrops + r.DownQueueDrops
		kernel += r.KernelDrops
		if r.Limited != "" {
			limited++
			why = r.Limited
		}
	}
	row[7] = formatDuration(cpu / time.Duration(len(relays)))
	row[8] = fmt.Sprintf("%s · %s · %s", formatInt(lost), formatInt(queue), formatInt(kernel))
	row[9] = fmt.Sprintf("%d of %d", limited, len(relays))
	if single {
		row[9] = "no"
		if limited > 0 {
			row[9] = "YES: " + why
		}
	}
}

// linkOf is the link of the cell with this ID.
func linkOf(r *results.Study, id string) string {
	for _, c := range r.Cells {
		if c.ID == id {
			return c.Link
		}
	}
	return ""
}

func pct(x float64) string { return strconv.FormatFloat(100*x, 'f', 2, 64) + "%" }

// linksNote explains the links table: a study's, or a single run's.
func linksNote(r *results.Study) string {
	const drops = " Dropped, both ways over the measured runs: by the emulated loss, by the link's queue, and by the kernel at a TUN device's full queue before the relay read them (the relay's limit, not the link's)."
	if r.SingleRun && slices.ContainsFunc(r.Links, func(l results.Link) bool { return len(l.Segments) > 0 }) {
		return "A merge of segments (wirebench merge): each segment's client crossed a link of its own to this spec to reach the server (on its own machine, measured before its run: docs/network.md); a row per segment, then the relays' sums over the whole run. " +
			"\"wire rate\" is a UDP flood's arrival rate above a set rate, the TCP transfer's IP bytes on an unlimited link (the relay's own limit)." + drops
	}
	if r.SingleRun {
		return "The client crossed the link and the server stayed on this machine's loopback (docs/network.md). " +
			"The link was measured before the run; \"wire rate\" is a UDP flood's arrival rate above a set rate, the TCP transfer's IP bytes on an unlimited link (the relay's own limit)." + drops
	}
	return "Every cell ran on each link, its trials interleaved with all others; the servers stayed on this machine's loopback and the client crossed the link (docs/network.md). " +
		"The link was measured before the trials; \"wire rate\" is a UDP flood's arrival rate above a set rate, the TCP transfer's IP bytes on an unlimited link (the relay's own limit)." + drops
}
