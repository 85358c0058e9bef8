package load

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/lazy"
)

// ErrStart reports that a synchronized start could not be kept: the start
// time had passed, or a barrier was not complete in time.
var ErrStart = errors.New("load: synchronized start")

// Limits of a synchronized start (README, limits table).
const (
	// MaxStartLate is how far past its StartAt a run may still begin. A
	// segment that starts later would owe a burst of overdue requests to
	// the shared schedule; it fails instead, naming how late it was.
	MaxStartLate = time.Second
	// MaxStartAhead bounds how far in the future StartAt may be: a start
	// a day away is a typo in a date, not a plan.
	MaxStartAhead = 24 * time.Hour
)

// Barrier holds the segments of one test until all are ready and tells
// each the one instant at which the whole schedule starts. Run calls Wait
// once its VUs are connected, so connection setup does not delay the
// start. Implementations must give every segment the same time.
type Barrier interface {
	Wait(ctx context.Context) (time.Time, error)
}

var unixRE = lazy.Regexp(`^[0-9]{1,11}(\.[0-9]{1,9})?$`)

// ParseStartAt reads a start time: RFC 3339 (2026-11-23T18:00:00Z, with
// or without fractional seconds) or Unix time in seconds (1795456800,
// 1795456800.25).
func ParseStartAt(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	// Digits only: ParseFloat would also take 1e9, 0x1p30, Inf and NaN.
	// Seconds and nanoseconds are read apart, exactly (a float64 of
	// 1.8e9 s keeps only about 0.2 µs).
	if !unixRE().MatchString(s) {
		return time.Time{}, fmt.Errorf("%w: start time %q: want RFC 3339 (2026-11-23T18:00:00Z) or Unix seconds", ErrOptions, s)
	}
	a, b, _ := strings.Cut(s, ".")
	sec, _ := strconv.ParseInt(a, 10, 64) // ≤ 11 digits: cannot overflow
	ns, _ := strconv.ParseInt((b + "000000000")[:9], 10, 64)
	return time.Unix(sec, ns).UTC(), nil
}

// waitStart returns the instant the run's schedule starts: now, or
// o.StartAt, or what o.Barrier says (which then becomes o.StartAt). It
// sleeps until then. The time returned carries a monotonic clock reading
// (now + the remaining wait), so the run's deadlines and intended send
// times are immune to wall-clock steps during the run.
func waitStart(ctx context.Context, o *Options) (time.Time, error) {
	if o.Barrier != nil {
		t, err := o.Barrier.Wait(ctx)
		if err != nil {
			return time.Time{}, err
		}
		o.StartAt = t
	}
	if o.StartAt.IsZero() {
		return time.Now(), nil
	}
	now := time.Now()
	switch wait := o.StartAt.Sub(now); {
	case wait < -MaxStartLate:
		return time.Time{}, fmt.Errorf("%w: start time %s passed %v ago (more than %v): this segment cannot join the shared schedule",
			ErrStart, o.StartAt.Format(time.RFC3339Nano), -wait.Round(time.Millisecond), MaxStartLate)
	case wait > MaxStartAhead:
		return time.Time{}, fmt.Errorf("%w: start time %s is %v away (more than %v)",
			ErrOptions, o.StartAt.Format(time.RFC3339Nano), wait.Round(time.Second), MaxStartAhead)
	case wait > 0:
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("%w: waiting for %s: %w", ErrStart, o.StartAt.Format(time.RFC3339Nano), ctx.Err())
		case <-t.C:
		}
	}
	now = time.Now()
	return now.Add(o.StartAt.Sub(now)), nil
}
