package results

import (
	"cmp"
	"fmt"
	"strings"
	"time"
)

// LinkSegment is one merged run's own link (Link.Segments): each segment
// of a distributed run opened, calibrated and relayed its own link, on
// its own machine, so each measured its own.
type LinkSegment struct {
	// Segment is the run's --segment i/n ("1/1" for a run without one,
	// merged with --unchecked).
	Segment     string           `json:"segment"`
	Calibration *LinkCalibration `json:"calibration,omitempty"`
	Relay       *LinkRelay       `json:"relay,omitempty"`
}

// linkKey is what makes two runs' links the same link: every value of
// the spec explicit, so that "3g" and its values spelled out are one
// link and a preset redefined between versions is another.
func linkKey(l *Link) string {
	if l == nil {
		return ""
	}
	return cmp.Or(l.Effective, l.Spec)
}

// linkDesc names a run's link in an error: its spec as given and, where
// that differs, every value; or loopback.
func linkDesc(l *Link) string {
	switch {
	case l == nil:
		return "loopback (no --link)"
	case l.Effective != "" && l.Effective != l.Spec:
		return fmt.Sprintf("link %q (%s)", l.Spec, l.Effective)
	}
	return fmt.Sprintf("link %q", l.Spec)
}

// checkLinks refuses parts run across different links, or some across a
// link and some on loopback: a merge of them would mix two networks'
// latencies in one histogram and state one link for all of it.
func checkLinks(parts []Part) error {
	if len(parts) == 0 {
		return nil
	}
	first := parts[0]
	for _, p := range parts[1:] {
		if linkKey(p.Result.Link) != linkKey(first.Result.Link) {
			return fmt.Errorf("%w: cannot merge %s, run on %s, with %s, run on %s: their latencies measure different networks",
				ErrLoad, p.Name, linkDesc(p.Result.Link), first.Name, linkDesc(first.Result.Link))
		}
	}
	return nil
}

// mergeLink is the link of the merge of rs, which checkLinks has found
// to share one link (nil: loopback). Each segment's calibration and
// relay figures are kept, in input order, in Segments: each is a
// measurement of its own link, and no one of them is the whole run's
// (nor a "worst", which has no one order across RTT, rate and loss), so
// the merge has no Calibration of its own. Its Relay sums the segments'
// counters, with their CPU per packet and lateness weighted by packets;
// Limited names each segment whose relay set the pace. It is nil if a
// segment has no relay figures, as a sum of some would not be the run's;
// warns then lists the segments that were limited.
func mergeLink(rs []*Load) (l *Link, warns []string) {
	if rs[0].Link == nil {
		return nil, nil
	}
	first := *rs[0].Link
	l = &Link{Spec: first.Spec, Effective: first.Effective, Preset: first.Preset, Source: first.Source}
	for _, r := range rs {
		if len(r.Link.Segments) > 0 { // itself a merge: its segments, not its sums
			l.Segments = append(l.Segments, r.Link.Segments...)
			continue
		}
		l.Segments = append(l.Segments, LinkSegment{Segment: r.Options.Segment.String(), Calibration: r.Link.Calibration, Relay: r.Link.Relay})
	}
	sum := &LinkRelay{}
	var cpu, late float64
	var limited []string
	for _, s := range l.Segments {
		r := s.Relay
		if r == nil {
			sum = nil
			continue
		}
		if r.Limited != "" {
			limited = append(limited, "segment "+s.Segment+": "+r.Limited)
		}
		if sum == nil {
			continue
		}
		sum.UpPackets += r.UpPackets
		sum.UpBytes += r.UpBytes
		sum.UpLost += r.UpLost
		sum.UpQueueDrops += r.UpQueueDrops
		sum.DownPackets += r.DownPackets
		sum.DownBytes += r.DownBytes
		sum.DownLost += r.DownLost
		sum.DownQueueDrops += r.DownQueueDrops
		sum.KernelDrops += r.KernelDrops
		cpu += float64(r.CPUPerPacket) * float64(r.UpPackets+r.DownPackets)
		late += float64(r.Late) * float64(sent(r))
	}
	if sum == nil {
		for _, why := range limited {
			warns = append(warns, (&LinkRelay{Limited: why}).Warning())
		}
		return l, warns
	}
	if n := sum.UpPackets + sum.DownPackets; n > 0 {
		sum.CPUPerPacket = time.Duration(cpu / float64(n))
	}
	if n := sent(sum); n > 0 {
		sum.Late = time.Duration(late / float64(n))
	}
	sum.Limited = strings.Join(limited, "; ")
	l.Relay = sum
	return l, nil
}

// sent is what weighs a relay's mean lateness in a sum: the packets it
// delivered, every packet but those the link lost or its queue dropped.
func sent(r *LinkRelay) int64 {
	return r.UpPackets - r.UpLost - r.UpQueueDrops + r.DownPackets - r.DownLost - r.DownQueueDrops
}
