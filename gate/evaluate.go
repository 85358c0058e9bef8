package gate

import (
	"cmp"
	"fmt"
	"reflect"
	"strings"

	"github.com/wirebench/wirebench/results"
	"github.com/wirebench/wirebench/results/stats"
)

// Options choose what a gate compares and how strictly; the zero value
// compares the study's baseline with its other cell on DefaultTolerances
// at α = 0.05.
type Options struct {
	// Base and Change are cells (their ID, or their label when unique).
	// Default: the baseline cell, and the one other cell that is not an
	// A/A partner of it.
	Base, Change string
	// AA is a cell that runs the same build as Base (an A/A pair): its
	// difference from Base shows the machine's own noise. Default: a cell
	// with the same command and commit as Base, if the study has one.
	AA         string
	Tolerances []Tolerance
	// Alpha is the significance level (default stats.Alpha, 0.05).
	Alpha float64
}

// Side is one of the compared cells.
type Side struct {
	Cell   string `json:"cell"`
	Rev    string `json:"rev,omitempty"`
	Commit string `json:"commit,omitempty"`
	// Trials counts the successful trials judged, Failed the others.
	Trials int `json:"trials"`
	Failed int `json:"failed"`
}

// Result is a gate's verdict with everything it rests on.
type Result struct {
	Study    string  `json:"study"`
	Title    string  `json:"title,omitempty"`
	Verdict  Verdict `json:"verdict"`
	ExitCode int     `json:"exit_code"`
	// Summary is the verdict in one line, for a log or a comment's title.
	Summary string  `json:"summary"`
	Alpha   float64 `json:"alpha"`
	Base    Side    `json:"base"`
	Change  Side    `json:"change"`
	Checks  []Check `json:"checks"`
	Noise   Noise   `json:"noise"`
}

// Evaluate judges the change against the base in a study's results.
// Errors are ErrOptions (a cell that does not exist, a study with too
// few cells); everything about the data is in the Result.
func Evaluate(s *results.Study, o Options) (*Result, error) {
	if o.Alpha == 0 {
		o.Alpha = stats.Alpha
	}
	if !(o.Alpha > 0 && o.Alpha < 0.5) {
		return nil, fmt.Errorf("%w: alpha %v: want 0 < α < 0.5", ErrOptions, o.Alpha)
	}
	if len(o.Tolerances) == 0 {
		o.Tolerances = DefaultTolerances()
	}
	base, change, aa, err := pickCells(s, o)
	if err != nil {
		return nil, err
	}
	r := &Result{Study: s.Study, Title: s.Title, Alpha: o.Alpha, Base: side(s, base), Change: side(s, change)}
	bt, ct := s.TrialsOf(base.ID), s.TrialsOf(change.ID)
	var samples []Sample
	for _, t := range o.Tolerances {
		samples = append(samples, sample(t, bt, ct))
	}
	r.Checks, r.Verdict = Decide(samples, o.Alpha)
	switch {
	case r.Base.Trials == 0:
		r.Verdict = Undecidable
		r.Summary = fmt.Sprintf("UNDECIDABLE: the base (%s) has no successful trial (%d failed)%s", base.ID, r.Base.Failed, firstError(s, base.ID))
	case r.Change.Trials == 0 && r.Change.Failed > 0:
		// The change broke the server: that is the worst regression.
		r.Verdict = Regression
		r.Summary = fmt.Sprintf("REGRESSION: the change (%s) failed every trial (%d) where the base succeeded%s", change.ID, r.Change.Failed, firstError(s, change.ID))
	default:
		r.Summary = summary(r)
	}
	r.ExitCode = r.Verdict.ExitCode()
	r.Noise = noise(s, r, base, change, aa, bt, o)
	if samePair(base, change) {
		r.Noise.Warnings = append(r.Noise.Warnings, fmt.Sprintf("the change (%s) runs the base's build (%s): an A/A run, so any regression found is a false positive",
			change.ID, cmp.Or(shortCommit(base.Commit), base.Rev)))
	}
	return r, nil
}

// sample reads one tolerance's metric from both sides' trials.
func sample(t Tolerance, base, change []results.Trial) Sample {
	s := Sample{Tolerance: t}
	read := func(ts []results.Trial) []float64 {
		var out []float64
		for _, tr := range ts {
			if v, ok := t.Metric.Value(tr); ok {
				out = append(out, v)
			}
		}
		return out
	}
	s.Base, s.Change = read(base), read(change)
	switch {
	case len(s.Base) > 0 && len(s.Change) > 0:
	case t.Metric.Name == "capacity":
		s.Skip = "the results carry no capacity (a study with measure: capacity measures it)"
	case t.Metric.Name == "cpu_per_req" || t.Metric.Name == "rss":
		s.Skip = "no server process was sampled (a server already running, or no CPU time recorded)"
	default:
		s.Skip = "no trial has it on both sides"
	}
	return s
}

// summary is the verdict in one line: the regressions, or the undecided
// metrics, or the pass with what was checked.
func summary(r *Result) string {
	var names []string
	for _, c := range r.Checks {
		if c.Verdict == r.Verdict {
			names = append(names, fmt.Sprintf("%s %s [%s … %s] vs %s", c.Metric, pct(float64(c.Delta)), pct(float64(c.Lo)), pct(float64(c.Hi)),
				fmt.Sprintf("%+g%%", c.Tolerance)))
		}
	}
	n := fmt.Sprintf("%d+%d trials, α = %g", r.Base.Trials, r.Change.Trials, r.Alpha)
	switch r.Verdict {
	case Regression:
		return fmt.Sprintf("REGRESSION: %s (%s)", strings.Join(names, "; "), n)
	case Pass:
		return fmt.Sprintf("PASS: no regression beyond tolerance (%s)", n)
	}
	if len(names) == 0 {
		return fmt.Sprintf("UNDECIDABLE: no metric could be judged (%s)", n)
	}
	return fmt.Sprintf("UNDECIDABLE: cannot rule out a regression of the tolerated size in %s (%s)", strings.Join(names, "; "), n)
}

func side(s *results.Study, c results.Cell) Side {
	sd := Side{Cell: c.ID, Rev: c.Rev, Commit: c.Commit}
	for _, t := range s.Trials {
		if t.Cell != c.ID {
			continue
		}
		if t.Error == "" && t.Load != nil {
			sd.Trials++
		} else {
			sd.Failed++
		}
	}
	return sd
}

func firstError(s *results.Study, id string) string {
	for _, t := range s.Trials {
		if t.Cell == id && t.Error != "" {
			return " (first: " + t.Error + ")"
		}
	}
	return ""
}

// pickCells finds the base, the change and the A/A partner (zero Cell if
// none).
func pickCells(s *results.Study, o Options) (base, change, aa results.Cell, err error) {
	if s.SingleRun || len(s.Cells) < 2 {
		return base, change, aa, fmt.Errorf("%w: the gate compares two cells of one study (wirebench study run gate.yaml); this file has %d", ErrOptions, len(s.Cells))
	}
	if o.Base != "" {
		if base, err = findCell(s, o.Base); err != nil {
			return
		}
	} else {
		base = s.Cells[0]
		for _, c := range s.Cells {
			if c.Baseline {
				base = c
				break
			}
		}
	}
	if o.AA != "" {
		if aa, err = findCell(s, o.AA); err != nil {
			return
		}
		if aa.ID == base.ID {
			return base, change, aa, fmt.Errorf("%w: --aa %s is the base itself", ErrOptions, o.AA)
		}
	}
	if o.Change != "" {
		if change, err = findCell(s, o.Change); err != nil {
			return
		}
	} else {
		var others, rest []results.Cell
		for _, c := range s.Cells {
			if c.ID != base.ID && c.ID != aa.ID {
				rest = append(rest, c)
				if !samePair(base, c) {
					others = append(others, c)
				}
			}
		}
		if len(others) == 0 && len(rest) == 1 {
			// One other cell, running the base's own build: an A/A study,
			// whose file names its baseline; that other cell is the change.
			others = rest
		}
		if len(others) != 1 {
			return base, change, aa, fmt.Errorf("%w: name the change with --change (the study has cells %s)", ErrOptions, cellList(s))
		}
		change = others[0]
	}
	if change.ID == base.ID {
		return base, change, aa, fmt.Errorf("%w: the base and the change are the same cell %s", ErrOptions, base.ID)
	}
	if o.AA == "" {
		for _, c := range s.Cells {
			if c.ID != base.ID && c.ID != change.ID && samePair(base, c) {
				aa = c
				break
			}
		}
	}
	return base, change, aa, nil
}

func shortCommit(c string) string { return c[:min(len(c), 12)] }

// samePair reports whether two cells run the same build the same way: an
// A/A pair.
func samePair(a, b results.Cell) bool {
	return a.Commit == b.Commit && (a.Commit != "" || a.Rev == b.Rev) && len(a.Command) > 0 &&
		reflect.DeepEqual(a.Command, b.Command) && reflect.DeepEqual(a.Load, b.Load) && a.External == b.External
}

func findCell(s *results.Study, name string) (results.Cell, error) {
	if c, ok := s.CellByID(name); ok {
		return c, nil
	}
	var found []results.Cell
	for _, c := range s.Cells {
		if c.Label == name {
			found = append(found, c)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return results.Cell{}, fmt.Errorf("%w: no cell %q (have %s)", ErrOptions, name, cellList(s))
	}
	return results.Cell{}, fmt.Errorf("%w: %q names %d cells; give the cell ID (have %s)", ErrOptions, name, len(found), cellList(s))
}

func cellList(s *results.Study) string {
	var ids []string
	for _, c := range s.Cells {
		ids = append(ids, c.ID)
	}
	return strings.Join(ids, ", ")
}
