package results

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// MergePoll is how often MergeInputs reads its inputs again while it
// waits for missing segments.
const MergePoll = time.Second

// MergeOptions say how MergeInputs reads and merges.
type MergeOptions struct {
	// Unchecked merges any results of one scenario (repeated runs, some
	// segments only); otherwise the inputs must be exactly the segments
	// of one test (CheckSegments).
	Unchecked bool
	// Wait, if > 0, waits up to this long for inputs not there yet and
	// missing segments, reading the inputs again every MergePoll; any
	// other error ends it at once.
	Wait time.Duration
	// Thresholds are judged on the merged result beside those its
	// segments were run with (Config.Thresholds), each once.
	Thresholds []string
}

// MergeInputs reads inputs (files, directories, - for stdin: ReadParts)
// and merges them exactly (Merge). A merge of an interrupted result is
// marked interrupted and warns that it covers less than planned; notes
// say which inputs were (one line each). ths are the thresholds to judge
// the merged result by; one that cannot be read is ErrThreshold.
func MergeInputs(ctx context.Context, stdin io.Reader, inputs []string, o MergeOptions) (m *Load, ths []Threshold, notes []string, err error) {
	parts, err := readSegments(ctx, stdin, inputs, !o.Unchecked, o.Wait)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := checkLinks(parts); err != nil { // Merge's check, naming the inputs
		return nil, nil, nil, err
	}
	rs := make([]*Load, len(parts))
	var stop *Stop
	for i, p := range parts {
		rs[i] = p.Result
		if s := p.Result.Stop; s != nil && s.Interrupted {
			notes = append(notes, fmt.Sprintf("%s was interrupted (%s): it covers less than its segment's share", p.Name, s.Signal))
			stop = s
		}
	}
	if m, err = Merge(rs...); err != nil {
		return nil, nil, nil, err
	}
	if stop != nil { // the merge of a cut-short run is cut short too
		m.Stop = &Stop{Interrupted: true, Signal: stop.Signal}
		m.Warnings = append(m.Warnings, "merged from interrupted results: the figures cover less than the test planned")
	}
	seen := map[string]bool{}
	for _, e := range append(append([]string(nil), m.Config.Thresholds...), o.Thresholds...) {
		if seen[strings.TrimSpace(e)] {
			continue
		}
		seen[strings.TrimSpace(e)] = true
		th, err := ParseThreshold(e)
		if err != nil {
			return nil, nil, nil, err
		}
		ths = append(ths, th)
	}
	return m, ths, notes, nil
}

// readSegments reads the inputs and checks that they are one test's
// segments (if check), waiting for them up to wait.
func readSegments(ctx context.Context, stdin io.Reader, inputs []string, check bool, wait time.Duration) ([]Part, error) {
	deadline := time.Now().Add(wait)
	for {
		parts, err := ReadParts(stdin, inputs)
		if err == nil && check {
			err = CheckSegments(parts)
		}
		pending := errors.Is(err, ErrIncomplete) || errors.Is(err, os.ErrNotExist) || errors.Is(err, ErrNoResultFiles)
		if err == nil || !pending || wait <= 0 || time.Now().After(deadline) {
			if err != nil && pending && wait > 0 {
				err = fmt.Errorf("%w (after waiting %v)", err, wait)
			}
			return parts, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (waiting for segments: %w)", err, ctx.Err())
		case <-time.After(MergePoll):
		}
	}
}
