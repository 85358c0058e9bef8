package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// ErrNotOneTest reports results that are not the segments of one test:
// another scenario or options, a segment missing or given twice.
var ErrNotOneTest = errors.New("load: not the segments of one test")

// ErrIncomplete reports a segment set with segments missing (wrapped with
// ErrNotOneTest): those may still be running.
var ErrIncomplete = errors.New("missing")

// Part is a result to merge and the name errors call it by (its file,
// or "stdin line 3").
type Part struct {
	Name   string
	Result *Load
}

// CheckSegments reports whether parts are exactly the segments of one
// test, so that their merge is that test's result: the same scenario,
// configuration (target, request, format, thresholds: the CLI's Config
// less the argument list, which names each segment's own files) and
// whole-test options (rate, duration, VUs, start time), one split i/n,
// every segment once. A part may itself be a merge of some segments.
// Errors name the parts concerned.
func CheckSegments(parts []Part) error {
	if len(parts) == 0 {
		return fmt.Errorf("%w: nothing to merge", ErrNotOneTest)
	}
	first := parts[0]
	firstCfg, err := configKey(first.Result)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrNotOneTest, first.Name, err)
	}
	firstTest, _ := json.Marshal(first.Result.Test)
	n, nFrom := 0, ""
	owner := map[int]string{} // segment index → the part that holds it
	for _, p := range parts {
		r := p.Result
		if r.Scenario != first.Result.Scenario {
			return fmt.Errorf("%w: %s is scenario %q, %s is %q", ErrNotOneTest, p.Name, r.Scenario, first.Name, first.Result.Scenario)
		}
		if r.Test == nil {
			return fmt.Errorf("%w: %s is not a segment of a test (a run without --segment i/n, or written by a wirebench before segments recorded their test)", ErrNotOneTest, p.Name)
		}
		if test, _ := json.Marshal(r.Test); !bytes.Equal(test, firstTest) {
			return fmt.Errorf("%w: %s and %s were run with different options: %s", ErrNotOneTest, first.Name, p.Name, diffJSON(firstTest, test))
		}
		if cfg, err := configKey(r); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrNotOneTest, p.Name, err)
		} else if !bytes.Equal(cfg, firstCfg) {
			return fmt.Errorf("%w: %s and %s have different configurations: %s", ErrNotOneTest, first.Name, p.Name, diffJSON(firstCfg, cfg))
		}
		segs, err := segmentsOf(r)
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrNotOneTest, p.Name, err)
		}
		for _, s := range segs {
			if n == 0 {
				n, nFrom = s.N, p.Name
			}
			if s.N != n {
				return fmt.Errorf("%w: %s holds segment %s, but %s is of a %d-way split", ErrNotOneTest, p.Name, s, nFrom, n)
			}
			if prev, dup := owner[s.I]; dup {
				return fmt.Errorf("%w: segment %s is in both %s and %s", ErrNotOneTest, s, prev, p.Name)
			}
			owner[s.I] = p.Name
		}
	}
	var missing []string
	for i := 1; i <= n; i++ {
		if _, ok := owner[i]; !ok {
			missing = append(missing, Segment{I: i, N: n}.String())
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: segments %s %w (have %d of %d)", ErrNotOneTest, strings.Join(missing, ", "), ErrIncomplete, n-len(missing), n)
	}
	return nil
}

// segmentsOf lists the segments a result holds: its own, or those merged
// into it.
func segmentsOf(r *Load) ([]Segment, error) {
	if len(r.Segments) == 0 {
		if r.Options.Segment.N < 1 {
			return nil, errors.New("no segment recorded")
		}
		return []Segment{r.Options.Segment}, nil
	}
	out := make([]Segment, len(r.Segments))
	for i, s := range r.Segments {
		seg, err := ParseSegment(s)
		if err != nil {
			return nil, fmt.Errorf("merged segment %q: %w", s, err)
		}
		out[i] = seg
	}
	return out, nil
}

// configKey is r.Config without "args" (the command line, which names
// the segment and its output file), as canonical JSON.
func configKey(r *Load) ([]byte, error) {
	c := r.Config
	c.Args = nil
	b, err := json.Marshal(c) // a struct's fields in order: canonical
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	return b, nil
}

// diffJSON names the first top-level field of two JSON objects that
// differs, with both values, so an error says what to fix.
func diffJSON(a, b []byte) string {
	var ma, mb map[string]json.RawMessage
	if json.Unmarshal(a, &ma) != nil || json.Unmarshal(b, &mb) != nil {
		return "(unreadable)"
	}
	keys := map[string]bool{}
	for k := range ma {
		keys[k] = true
	}
	for k := range mb {
		keys[k] = true
	}
	var names []string
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if !bytes.Equal(ma[k], mb[k]) {
			return fmt.Sprintf("%s %s vs %s", k, orNone(ma[k]), orNone(mb[k]))
		}
	}
	return "(same fields)"
}

func orNone(b json.RawMessage) string {
	if b == nil {
		return "(none)"
	}
	const max = 200
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}
