package report

import (
	"fmt"
	"strconv"
	"time"

	"github.com/wirebench/wirebench/results"
)

// linksTable is a study's links axis: each link as asked for beside the
// link measured before the trials, and what its relay did over the
// measured runs (the emulator's CPU per packet, and the trials where it,
// not the link, set the pace).
func linksTable(r *results.Study) table {
	t := table{Header: []string{"link", "spec", "RTT set", "RTT measured (UDP min / median)", "rate up / down set", "wire rate up / down", "loss set → up / down", "relay CPU/packet (trials)", "trials the relay limited"}}
	for _, l := range r.Links {
		row := []string{l.Spec, l.Effective, "—", "—", "—", "—", "—", "—", "—"}
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
		for _, tr := range r.Trials {
			if tr.Relay == nil || linkOf(r, tr.Cell) != l.Spec {
				continue
			}
			n++
			cpu += tr.Relay.CPUPerPacket
			if tr.Relay.Limited != "" {
				limited++
			}
		}
		if n > 0 {
			row[7] = formatDuration(cpu / time.Duration(n))
			row[8] = fmt.Sprintf("%d of %d", limited, n)
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
	if r.SingleRun {
		return "The client crossed the link and the server stayed on this machine's loopback (docs/network.md). " +
			"The link was measured before the run; \"wire rate\" is a UDP flood's arrival rate above a set rate, the TCP transfer's IP bytes on an unlimited link (the relay's own limit)."
	}
	return "Every cell ran on each link, its trials interleaved with all others; the servers stayed on this machine's loopback and the client crossed the link (docs/network.md). " +
		"The link was measured before the trials; \"wire rate\" is a UDP flood's arrival rate above a set rate, the TCP transfer's IP bytes on an unlimited link (the relay's own limit)."
}
