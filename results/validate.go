package results

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/wirebench/wirebench/measure"
)

// ErrImpossible marks a result file whose numbers cannot all be true
// (negative counts, more failures than requests, histograms that disagree
// with the counts): a hand-edited, truncated-and-patched or crafted file.
// report, compare and merge refuse it rather than render or merge nonsense.
var ErrImpossible = errors.New("impossible result")

// CheckFileSize refuses a regular file larger than MaxFileSize before a
// byte of it is read (a 1 GB input was read to 256 MiB first). Pipes and
// other non-regular files are bounded by the reader's limit instead.
func CheckFileSize(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.Mode().IsRegular() && fi.Size() > MaxFileSize {
		return fmt.Errorf("%s: %w: %d bytes, more than the limit of %d MiB (results.MaxFileSize)", path, ErrResults, fi.Size(), MaxFileSize>>20)
	}
	return nil
}

// Validate checks every number of a decoded result (a study's, or a load
// run's read as a one-trial study) that must hold in any real run. The
// error names the field, as JSON spells it.
func Validate(s *Study) error {
	for i, t := range s.Trials {
		at := fmt.Sprintf("trials[%d]", i)
		if t.Index < 0 || t.Order < 0 {
			return impossible(at, "index %d and order %d cannot be negative", t.Index, t.Order)
		}
		for _, c := range []struct {
			name string
			v    int64
		}{
			{"server.cpu_ns", int64(t.Server.CPU)}, {"server.peak_rss_bytes", t.Server.PeakRSS},
			{"users_before", int64(t.UsersBefore)}, {"users_after", int64(t.UsersAfter)},
			{"todos_before", int64(t.TodosBefore)}, {"todos_after", int64(t.TodosAfter)},
		} {
			if c.v < 0 {
				return impossible(at+"."+c.name, "%d is negative", c.v)
			}
		}
		for j, p := range t.Server.Samples {
			if p.T < 0 || p.RSS < 0 || p.CPU < 0 {
				return impossible(fmt.Sprintf("%s.server.samples[%d]", at, j), "negative value (t_ns %d, rss_bytes %d, cpu_ns %d)", p.T, p.RSS, p.CPU)
			}
		}
		if t.Load != nil {
			if err := ValidateLoad(t.Load); err != nil {
				if s.SingleRun {
					return err // the file is the load run: its own field names
				}
				return fmt.Errorf("%s.load.%w", at, err)
			}
		}
	}
	for i, p := range s.Payloads {
		if p.N < 0 || p.Body < 0 || p.Coded < 0 || p.Wire < 0 {
			return impossible(fmt.Sprintf("payloads[%d]", i), "negative size or count")
		}
	}
	return nil
}

// ValidateLoad checks one load result: counts not negative, failures no
// more than requests, per-operation counts within the totals, histograms
// holding no more values than there were requests, and (for results of
// the engine's own loop) failure messages adding up to the failures.
func ValidateLoad(r *Load) error {
	counts := []struct {
		name string
		v    int64
	}{
		{"requests", r.Requests}, {"failed", r.Failed}, {"interrupted", r.Interrupted},
		{"window_ns", int64(r.Window)},
		{"bytes.wire_in", r.Bytes.WireIn}, {"bytes.wire_out", r.Bytes.WireOut},
		{"bytes.body_in", r.Bytes.BodyIn}, {"bytes.body_out", r.Bytes.BodyOut},
		{"client_cpu.user_ns", int64(r.CPU.User)}, {"client_cpu.system_ns", int64(r.CPU.System)},
		{"client_cpu.allocs", r.CPU.Allocs}, {"client_cpu.alloc_bytes", r.CPU.AllocBytes},
	}
	for _, c := range counts {
		if c.v < 0 {
			return impossible(c.name, "%d is negative", c.v)
		}
	}
	if r.Failed > r.Requests {
		return impossible("failed", "%d failures out of %d requests", r.Failed, r.Requests)
	}
	if !r.Start.IsZero() && r.End.Before(r.Start) {
		return impossible("end", "%v is before start %v", r.End, r.Start)
	}
	for _, h := range []struct {
		name string
		h    *measure.Histogram
	}{{"latency", r.Latency}, {"service", r.Service}, {"lag", r.Lag}} {
		if h.h == nil {
			return impossible(h.name, "histogram missing")
		}
	}
	var opSum int64
	for i, op := range r.Ops {
		at := fmt.Sprintf("ops[%d] (%s)", i, op.Name)
		switch {
		case op.Requests < 0 || op.Failed < 0:
			return impossible(at, "requests %d and failed %d cannot be negative", op.Requests, op.Failed)
		case op.Failed > op.Requests:
			return impossible(at+".failed", "%d failures out of %d requests", op.Failed, op.Requests)
		case op.Latency != nil && op.Latency.Count() > op.Requests:
			return impossible(at+".latency", "holds %d values for %d requests", op.Latency.Count(), op.Requests)
		}
		if opSum += op.Requests; opSum > r.Requests || opSum < 0 {
			return impossible("ops", "%d requests in the operations, more than the %d in all", opSum, r.Requests)
		}
	}
	var failSum, statusSum int64
	for msg, n := range r.Failures {
		if n < 0 {
			return impossible(fmt.Sprintf("failures[%q]", msg), "%d is negative", n)
		}
		if failSum += n; failSum < 0 {
			return impossible("failures", "the counts overflow")
		}
	}
	for s, n := range r.Status {
		if n < 0 {
			return impossible(fmt.Sprintf("status[%q]", s), "%d is negative", n)
		}
		if statusSum += n; statusSum < 0 {
			return impossible("status", "the counts overflow")
		}
	}
	// A request is at most one value in each histogram (the in-browser
	// page records only its successful calls; the engine every request).
	for _, h := range []struct {
		name string
		h    *measure.Histogram
	}{{"latency", r.Latency}, {"service", r.Service}, {"lag", r.Lag}} {
		if n := h.h.Count(); n > r.Requests {
			return impossible(h.name, "holds %d values for %d requests", n, r.Requests)
		}
	}
	// The engine counts each failure once under its message; the page
	// counts failed calls, but its messages per failed batch.
	if engineLoop(r) && failSum != r.Failed {
		return impossible("failures", "the messages count %d failures, failed says %d", failSum, r.Failed)
	}
	return nil
}

// engineLoop reports whether r's counts come from the engine's own loop,
// where each failure is counted once under its message; the in-browser
// page counts its calls itself.
func engineLoop(r *Load) bool { return !strings.HasPrefix(r.Scenario, "browser") }

func impossible(field, format string, a ...any) error {
	return fmt.Errorf("%s: %w: %s", field, ErrImpossible, fmt.Sprintf(format, a...))
}
