package load

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/lazy"
	"github.com/wirebench/wirebench/results"
)

// Defaults and bounds of a FileBarrier (README, limits table).
const (
	// DefaultBarrierLead is the time from the last segment's arrival to
	// the start: every segment must see the last arrival within it (poll
	// interval, a shared volume's attribute caching).
	DefaultBarrierLead = 2 * time.Second
	// DefaultBarrierTimeout is how long a segment waits for the others
	// (pods may wait for a node or an image pull).
	DefaultBarrierTimeout = 10 * time.Minute
	// barrierPoll is how often the directory is read while waiting.
	barrierPoll = 20 * time.Millisecond
	// maxBarrierFile bounds what is read of a barrier file (one timestamp).
	maxBarrierFile = 64
)

// FileBarrier is a Barrier over a directory that every segment sees (a
// shared volume, or one machine's disk). Segment i of n announces itself
// by creating the file ready-<i>-of-<n> holding its wall-clock time
// (RFC 3339), exclusively: a segment whose file is already there (left
// by an earlier run, or a duplicate index) fails instead of joining.
// When all n files are there, every segment computes the same start:
// the latest of the n times plus Lead. Clocks of the segments' machines
// must agree (NTP), as for Options.StartAt.
//
//	<Dir>/ready-1-of-4   2026-11-23T18:00:00.123456789Z\n
//	<Dir>/ready-2-of-4   2026-11-23T18:00:01.5Z\n   ← latest: start = this + Lead
//	…
type FileBarrier struct {
	Dir     string
	Segment results.Segment
	// Lead is the time from the last arrival to the start (default
	// DefaultBarrierLead); a segment that learns of the last arrival
	// later than MaxStartLate after the start fails.
	Lead time.Duration
	// Timeout bounds the wait for the others (default DefaultBarrierTimeout).
	Timeout time.Duration
	// now is time.Now; tests shift it to play segments with skewed clocks.
	now func() time.Time
}

var readyRE = lazy.Regexp(`^ready-([0-9]+)-of-([0-9]+)$`)

func readyName(s results.Segment) string { return fmt.Sprintf("ready-%d-of-%d", s.I, s.N) }

// Wait implements Barrier.
func (b FileBarrier) Wait(ctx context.Context) (time.Time, error) {
	if b.Segment.N < 1 || b.Segment.Validate() != nil {
		return time.Time{}, fmt.Errorf("%w: a barrier needs the segment i/n, got %s", ErrOptions, b.Segment)
	}
	lead, timeout, now := b.Lead, b.Timeout, b.now
	if lead <= 0 {
		lead = DefaultBarrierLead
	}
	if timeout <= 0 {
		timeout = DefaultBarrierTimeout
	}
	if now == nil {
		now = time.Now
	}
	if err := os.MkdirAll(b.Dir, 0o777); err != nil {
		return time.Time{}, fmt.Errorf("%w: barrier: %w", ErrStart, err)
	}
	if err := b.arrive(now()); err != nil {
		return time.Time{}, err
	}
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(barrierPoll)
	defer tick.Stop()
	for {
		times, missing, err := b.read()
		if err != nil {
			return time.Time{}, err
		}
		if len(missing) == 0 {
			last := times[0]
			for _, t := range times {
				if t.After(last) {
					last = t
				}
			}
			return last.Add(lead), nil
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("%w: barrier %s: waited %v, segments %s of %d never arrived",
				ErrStart, b.Dir, timeout, strings.Join(missing, ", "), b.Segment.N)
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("%w: barrier %s: %w", ErrStart, b.Dir, ctx.Err())
		case <-tick.C:
		}
	}
}

// arrive creates this segment's file, exclusively. It is written in
// place (not renamed in), so a reader may see it empty or half written
// for a moment: read takes that as "not yet arrived".
func (b FileBarrier) arrive(t time.Time) error {
	path := filepath.Join(b.Dir, readyName(b.Segment))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%w: barrier %s: segment %s has already arrived (a file of an earlier run, or two segments with one index): use a new directory per test",
			ErrStart, b.Dir, b.Segment)
	}
	if err != nil {
		return fmt.Errorf("%w: barrier: %w", ErrStart, err)
	}
	_, err = f.WriteString(t.UTC().Format(time.RFC3339Nano) + "\n")
	if err2 := f.Close(); err == nil {
		err = err2
	}
	if err != nil {
		return fmt.Errorf("%w: barrier: %w", ErrStart, err)
	}
	return nil
}

// read returns the arrival times of the segments there and the names of
// those missing. A segment of a test split another way is an error.
func (b FileBarrier) read() (times []time.Time, missing []string, err error) {
	entries, err := os.ReadDir(b.Dir)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: barrier: %w", ErrStart, err)
	}
	seen := map[int]time.Time{}
	for _, e := range entries {
		m := readyRE().FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		i, _ := strconv.Atoi(m[1])
		n, _ := strconv.Atoi(m[2])
		if n != b.Segment.N {
			return nil, nil, fmt.Errorf("%w: barrier %s holds %s, a segment of a %d-way split; this one is %s",
				ErrStart, b.Dir, e.Name(), n, b.Segment)
		}
		if t, ok := readReady(filepath.Join(b.Dir, e.Name())); ok && i >= 1 && i <= n {
			seen[i] = t
		}
	}
	for i := 1; i <= b.Segment.N; i++ {
		if t, ok := seen[i]; ok {
			times = append(times, t)
		} else {
			missing = append(missing, results.Segment{I: i, N: b.Segment.N}.String())
		}
	}
	return times, missing, nil
}

// readReady reads one arrival time; false while the file is being written.
func readReady(path string) (time.Time, bool) {
	f, err := os.Open(path)
	if err != nil {
		return time.Time{}, false
	}
	defer f.Close()
	buf := make([]byte, maxBarrierFile)
	n, _ := f.Read(buf)
	line, complete := strings.CutSuffix(string(buf[:n]), "\n")
	if !complete {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, line)
	return t, err == nil
}
