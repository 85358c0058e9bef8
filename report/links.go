package report

import (
	"fmt"
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
		row := []string{l.Spec, l.Effective, "—", "—", "—", "—", "—", "—", "—", "—"}
		if c := l.Calibration; c != nil {
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
		var cpu time.Duration
		var n, limited int
		var lost, queue, kernel int64
		why := ""
		for _, tr := range r.Trials {
			if tr.Relay == nil || linkOf(r, tr.Cell) != l.Spec {
				continue
			}
			n++
			cpu += tr.Relay.CPUPerPacket
			lost += tr.Relay.UpLost + tr.Relay.DownLost
			queue += tr.Relay.UpQueueDrops + tr.Relay.DownQueueDrops
			kernel += tr.Relay.KernelDrops
			if tr.Relay.Limited != "" {
				limited++
				why = tr.Relay.Limited
			}
		}
		if n > 0 {
			row[7] = formatDuration(cpu / time.Duration(n))
			row[8] = fmt.Sprintf("%s · %s · %s", formatInt(lost), formatInt(queue), formatInt(kernel))
			row[9] = fmt.Sprintf("%d of %d", limited, n)
			if r.SingleRun {
				row[9] = "no"
				if limited > 0 {
					row[9] = "YES: " + why
				}
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
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
	if r.SingleRun {
		return "The client crossed the link and the server stayed on this machine's loopback (docs/network.md). " +
			"The link was measured before the run; \"wire rate\" is a UDP flood's arrival rate above a set rate, the TCP transfer's IP bytes on an unlimited link (the relay's own limit)." + drops
	}
	return "Every cell ran on each link, its trials interleaved with all others; the servers stayed on this machine's loopback and the client crossed the link (docs/network.md). " +
		"The link was measured before the trials; \"wire rate\" is a UDP flood's arrival rate above a set rate, the TCP transfer's IP bytes on an unlimited link (the relay's own limit)." + drops
}
