package results

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Link is the emulated network a run went through (--link): the spec as
// given, every value it set, and the link measured through before the
// run. Nil in a run over the machine's own loopback.
type Link struct {
	Spec      string `json:"spec"`      // as given
	Effective string `json:"effective"` // every value explicit
	Preset    string `json:"preset,omitempty"`
	Source    string `json:"preset_source,omitempty"`
	// Calibration is nil when the run skipped it.
	Calibration *LinkCalibration `json:"calibration,omitempty"`
	// Relay is what the relay did over a load, capacity or replay run
	// (--out): the same figures a study's trials hold (Trial.Relay), so
	// a report can say whether the emulator limited the run. Nil in a
	// study's Links (each trial has its own) and in files before it.
	Relay *LinkRelay `json:"relay,omitempty"`
	// Segments, in a merge of runs across one link (wirebench merge), are
	// each run's own calibration and relay figures; the merge then has no
	// Calibration, and its Relay sums theirs (linkmerge.go).
	Segments []LinkSegment `json:"segments,omitempty"`
}

// LinkCalibration is the link actually obtained, measured through it
// (package link's Calibrate), beside what the spec sets.
type LinkCalibration struct {
	// Round trips: the minimum and median of small request/response
	// exchanges over TCP (one connection, Nagle off) and UDP, and the
	// minimum TCP handshake. RTTExpected is what the spec sets for such a
	// probe: 2×delay plus its packets' serialisation each way.
	RTTExpected  time.Duration `json:"rtt_expected_ns"`
	RTTTCP       time.Duration `json:"rtt_tcp_ns"`
	RTTTCPMedian time.Duration `json:"rtt_tcp_median_ns"`
	RTTUDP       time.Duration `json:"rtt_udp_ns"`
	RTTUDPMedian time.Duration `json:"rtt_udp_median_ns"`
	RTTConnect   time.Duration `json:"rtt_connect_ns"`
	// Bulk TCP transfers each way, over their second half (past slow
	// start): goodput (bytes read by the receiver), bits/s. The wire rate
	// is IP bytes the relay sent on: a UDP flood's at 1.5× a limited
	// rate, the TCP transfer's on an unlimited one. UpRate/DownRate are the spec's
	// (0: unlimited). Zero goodput: not measured.
	UpRate      int64   `json:"up_rate_bps,omitempty"`
	DownRate    int64   `json:"down_rate_bps,omitempty"`
	UpGoodput   float64 `json:"up_goodput_bps,omitempty"`
	DownGoodput float64 `json:"down_goodput_bps,omitempty"`
	UpWire      float64 `json:"up_wire_bps,omitempty"`
	DownWire    float64 `json:"down_wire_bps,omitempty"`
	// Loss of LossPackets UDP datagrams each way, paced below the rate;
	// LossSet is the spec's long-run loss rate.
	LossPackets int     `json:"loss_packets,omitempty"`
	LossSet     float64 `json:"loss_set"`
	LossUp      float64 `json:"loss_up"`
	LossDown    float64 `json:"loss_down"`
	// The relay's own cost over the calibration: CPU per packet of its
	// threads, and how late it sent packets after their due time (mean).
	CPUPerPacket time.Duration `json:"relay_cpu_per_packet_ns"`
	Late         time.Duration `json:"relay_late_ns"`
	Took         time.Duration `json:"took_ns"`
	// Off says how the link measured is off its spec beyond the stated
	// tolerances ("" when within them).
	Off string `json:"off,omitempty"`
}

// WriteLinkSummary prints the link, requested beside measured; a
// merge's, each segment's link and then the relay's sums.
func WriteLinkSummary(w io.Writer, l *Link) {
	if l == nil {
		return
	}
	name := l.Effective
	if l.Preset != "" {
		name = l.Preset + " (" + l.Effective + ")"
	}
	fmt.Fprintf(w, "\n  link: %s\n", name)
	if len(l.Segments) == 0 {
		writeCalibration(w, "    ", l.Calibration)
		writeRelay(w, "    the run  ", l.Relay)
		return
	}
	fmt.Fprintf(w, "    merged from %d runs, each across a link of its own to this spec:\n", len(l.Segments))
	for _, s := range l.Segments {
		fmt.Fprintf(w, "    segment %s\n", s.Segment)
		writeCalibration(w, "      ", s.Calibration)
		writeRelay(w, "      the run  ", s.Relay)
	}
	if l.Relay != nil {
		writeRelay(w, "    all runs ", l.Relay)
	} else {
		fmt.Fprintln(w, "    all runs  no sum of the relays' figures: a segment has none")
	}
}

// writeRelay prints what a relay did over a run, after label.
func writeRelay(w io.Writer, label string, r *LinkRelay) {
	if r == nil {
		return
	}
	fmt.Fprintf(w, "%s up %d packets, %s (%d lost, %d queue drops), down %d, %s (%d lost, %d queue drops); %d dropped by the kernel before the relay read them; relay %v CPU per packet, sent %v late on average\n",
		label, r.UpPackets, fmtBytes(r.UpBytes), r.UpLost, r.UpQueueDrops, r.DownPackets, fmtBytes(r.DownBytes), r.DownLost, r.DownQueueDrops, r.KernelDrops,
		r.CPUPerPacket.Round(100*time.Nanosecond), r.Late.Round(time.Microsecond))
	if warn := r.Warning(); warn != "" {
		fmt.Fprintf(w, "%sWARNING: %s\n", label[:len(label)-len(strings.TrimLeft(label, " "))], warn)
	}
}

func writeCalibration(w io.Writer, in string, c *LinkCalibration) {
	if c == nil {
		fmt.Fprintln(w, in+"not calibrated")
		return
	}
	fmt.Fprintf(w, in+"RTT       set %v, measured %v UDP, %v TCP (median %v, %v)\n",
		c.RTTExpected.Round(10*time.Microsecond), c.RTTUDP.Round(10*time.Microsecond), c.RTTTCP.Round(10*time.Microsecond),
		c.RTTUDPMedian.Round(10*time.Microsecond), c.RTTTCPMedian.Round(10*time.Microsecond))
	if c.UpGoodput > 0 || c.DownGoodput > 0 {
		fmt.Fprintf(w, in+"up        set %s, measured %s on the wire, TCP goodput %s\n", FormatBitRate(float64(c.UpRate)), FormatBitRate(c.UpWire), FormatBitRate(c.UpGoodput))
		fmt.Fprintf(w, in+"down      set %s, measured %s on the wire, TCP goodput %s\n", FormatBitRate(float64(c.DownRate)), FormatBitRate(c.DownWire), FormatBitRate(c.DownGoodput))
		fmt.Fprintln(w, in+"          (wire: a UDP flood above a set rate, else the TCP transfer's IP bytes)")
	}
	if c.LossPackets > 0 {
		fmt.Fprintf(w, in+"loss      set %s, measured %s up, %s down (%d UDP datagrams each way)\n",
			pctStr(c.LossSet), pctStr(c.LossUp), pctStr(c.LossDown), c.LossPackets)
	}
	fmt.Fprintf(w, in+"relay     %v CPU per packet, packets sent %v late on average\n", c.CPUPerPacket.Round(100*time.Nanosecond), c.Late.Round(time.Microsecond))
	if c.Off != "" {
		fmt.Fprintf(w, in+"OFF SPEC: %s\n", c.Off)
	}
}

// FormatBitRate writes a rate in bit/s as people read it (0: unlimited).
func FormatBitRate(x float64) string {
	switch {
	case x == 0:
		return "unlimited"
	case x >= 1e9:
		return strconv.FormatFloat(x/1e9, 'f', 3, 64) + " Gbit/s"
	case x >= 1e6:
		return strconv.FormatFloat(x/1e6, 'f', 3, 64) + " Mbit/s"
	}
	return strconv.FormatFloat(x/1e3, 'f', 1, 64) + " kbit/s"
}

func pctStr(x float64) string { return strconv.FormatFloat(x*100, 'f', 2, 64) + "%" }

// LinkRelay is what an emulated link's relay did over one measured run:
// packets each way (their IP bytes too: headers included, every verdict),
// those the link lost and those its queue dropped, the relay's CPU per
// packet and how late it sent them. KernelDrops are in none of the
// others: the relay never saw them.
type LinkRelay struct {
	UpPackets      int64         `json:"up_packets"`
	UpBytes        int64         `json:"up_bytes,omitempty"`
	UpLost         int64         `json:"up_lost"`
	UpQueueDrops   int64         `json:"up_queue_drops"`
	DownPackets    int64         `json:"down_packets"`
	DownBytes      int64         `json:"down_bytes,omitempty"`
	DownLost       int64         `json:"down_lost"`
	DownQueueDrops int64         `json:"down_queue_drops"`
	KernelDrops    int64         `json:"kernel_drops"` // dropped at a TUN device's full queue before the relay read them, both ways
	CPUPerPacket   time.Duration `json:"cpu_per_packet_ns"`
	Late           time.Duration `json:"late_ns"`
	// Limited, when set, says why the relay rather than the emulated
	// link set the pace of this run: its figures measure the machine.
	Limited string `json:"limited,omitempty"`
}

// Warning says that the relay, not the emulated link, set the pace of
// the run ("" when it did not): the same words for a study's trial and
// for a single run.
func (r *LinkRelay) Warning() string {
	if r == nil || r.Limited == "" {
		return ""
	}
	return "the link's relay, not the emulated link, set the pace (" + r.Limited + "): its figures measure this machine's relay"
}
