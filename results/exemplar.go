package results

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Exemplar is one request named so that it can be found again: in the
// server's logs by its W3C trace ID (when the run sent a traceparent
// header), or by its start time and the client's end of its connection.
type Exemplar struct {
	// TraceID is the 32 lowercase hex digits of the traceparent sent with
	// the request; empty when the run sent none (--traceparent off).
	TraceID string `json:"trace_id,omitempty"`
	// Op names the operation (Load.Ops[i].Name).
	Op string `json:"op,omitempty"`
	// Start is when the request was due: the intended send time in open
	// loop, the actual send in closed loop, as latency is measured.
	Start   time.Time     `json:"start"`
	Latency time.Duration `json:"latency_ns"`
	// Status is the response's status as Load.Status names it ("200",
	// "grpc Unavailable", "none"); Fail the failure reason, if it failed.
	Status string `json:"status"`
	Fail   string `json:"fail,omitempty"`
	// Conn is the client's local port of the request's connection (0 when
	// unknown): a server logging its peers' addresses logs it too.
	Conn int `json:"conn,omitempty"`
}

// Exemplars are the requests a run kept by name: the slowest, and a few
// per latency bucket (a power of two of microseconds), so that every part
// of the distribution has a request to trace. Each worker keeps its own;
// they are merged once at the end.
type Exemplars struct {
	// Slowest holds the N slowest requests, slowest first.
	Slowest []Exemplar `json:"slowest,omitempty"`
	// Buckets holds, per latency bucket, its slowest request and its
	// latest one, fastest bucket first.
	Buckets []Exemplar `json:"buckets,omitempty"`
}

// MaxSlowest bounds --slowest: every worker keeps that many, so the
// bound keeps the per-worker state small.
const MaxSlowest = 1000

// MergeExemplars merges sets of exemplars: the n slowest of all their
// slowest, and for each bucket the slowest and the latest of its
// exemplars. The result is sorted (Slowest slowest first, Buckets by
// latency); nil if there is nothing to keep.
func MergeExemplars(n int, sets ...*Exemplars) *Exemplars {
	var slow, all []Exemplar
	for _, s := range sets {
		if s == nil {
			continue
		}
		slow = append(slow, s.Slowest...)
		all = append(all, s.Buckets...)
	}
	if len(slow) == 0 && len(all) == 0 {
		return nil
	}
	slices.SortStableFunc(slow, func(a, b Exemplar) int { return slowerFirst(a, b) })
	slow = slices.CompactFunc(slow, sameRequest)
	if len(slow) > n {
		slow = slow[:n]
	}
	// Per bucket: its slowest and its latest exemplar.
	byBucket := map[int][2]Exemplar{}
	for _, e := range all {
		b := ExemplarBucket(e.Latency)
		k, ok := byBucket[b]
		if !ok {
			byBucket[b] = [2]Exemplar{e, e}
			continue
		}
		if e.Latency > k[0].Latency {
			k[0] = e
		}
		if e.Start.After(k[1].Start) {
			k[1] = e
		}
		byBucket[b] = k
	}
	var buckets []Exemplar
	for _, k := range byBucket {
		buckets = append(buckets, k[0])
		if !sameRequest(k[0], k[1]) {
			buckets = append(buckets, k[1])
		}
	}
	slices.SortFunc(buckets, func(a, b Exemplar) int {
		if c := int64(a.Latency - b.Latency); c != 0 {
			return sign(c)
		}
		return a.Start.Compare(b.Start)
	})
	return &Exemplars{Slowest: slow, Buckets: buckets}
}

// ExemplarBucket is the bucket of a latency: the bit length of its whole
// microseconds (0 for < 1 µs, 1 for 1 µs, 2 for 2–3 µs, … 26 for ~34–67 s).
func ExemplarBucket(d time.Duration) int {
	us := uint64(max(d/time.Microsecond, 0))
	n := 0
	for us > 0 {
		us >>= 1
		n++
	}
	return n
}

// ExemplarBuckets is how many buckets ExemplarBucket returns at most
// (a duration is below 2^63 ns, so below 2^54 µs).
const ExemplarBuckets = 55

func slowerFirst(a, b Exemplar) int {
	if c := int64(b.Latency - a.Latency); c != 0 {
		return sign(c)
	}
	return a.Start.Compare(b.Start)
}

func sameRequest(a, b Exemplar) bool {
	return a.TraceID == b.TraceID && a.Start.Equal(b.Start) && a.Latency == b.Latency && a.Conn == b.Conn
}

func sign(c int64) int {
	switch {
	case c < 0:
		return -1
	case c > 0:
		return 1
	}
	return 0
}

// SlowestLine is the summary's line on the slowest requests:
// "slowest: 3 requests ≥ 200ms, trace IDs 4bf9…, …" (at most five IDs),
// or "" when the run kept none.
func SlowestLine(e *Exemplars) string {
	if e == nil || len(e.Slowest) == 0 {
		return ""
	}
	s := e.Slowest
	least := s[len(s)-1].Latency
	var b strings.Builder
	fmt.Fprintf(&b, "slowest: %d requests ≥ %s (max %s)", len(s), FormatDuration(least), FormatDuration(s[0].Latency))
	var ids []string
	for _, x := range s[:min(len(s), 5)] {
		if x.TraceID != "" {
			ids = append(ids, x.TraceID)
		}
	}
	if len(ids) > 0 {
		fmt.Fprintf(&b, ", trace IDs %s", strings.Join(ids, ", "))
		if len(s) > len(ids) {
			b.WriteString(", …")
		}
	} else {
		b.WriteString(" (no trace IDs: run with --traceparent to name them)")
	}
	return b.String()
}

// WriteSlowest writes the slowest requests as a table, one per line.
func WriteSlowest(w io.Writer, e *Exemplars) error {
	if e == nil || len(e.Slowest) == 0 {
		return nil
	}
	ew := &errWriter{w: w}
	ew.printf("%-10s  %-32s  %-30s  %-8s  %-6s  %s\n", "latency", "trace id", "start", "status", "conn", "op")
	for _, x := range e.Slowest {
		st := x.Status
		if x.Fail != "" {
			st += " (" + x.Fail + ")"
		}
		ew.printf("%-10s  %-32s  %-30s  %-8s  %-6d  %s\n", FormatDuration(x.Latency), orDash(x.TraceID),
			x.Start.UTC().Format(time.RFC3339Nano), st, x.Conn, x.Op)
	}
	return ew.err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// mergeLoadExemplars merges the runs' exemplars, keeping as many of the
// slowest as the run that kept the most.
func mergeLoadExemplars(rs []*Load) *Exemplars {
	n := 0
	var sets []*Exemplars
	for _, r := range rs {
		if r.Exemplars != nil {
			n = max(n, len(r.Exemplars.Slowest))
			sets = append(sets, r.Exemplars)
		}
	}
	return MergeExemplars(n, sets...)
}
