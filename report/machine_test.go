package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/report/reporttest"
	"github.com/wirebench/wirebench/results"
)

// TestCompareDifferentMachines: two results measured on different
// machines are said to be not comparable, first, and no change between
// them is shown as one (single runs and studies alike); on one machine
// the change is shown and nothing is said.
func TestCompareDifferentMachines(t *testing.T) {
	t.Parallel()
	env := measure.Env{CPUModel: "AMD EPYC 7B13", NumCPU: 2, Affinity: []int{0, 1}, Kernel: "Linux 6.1", GoVersion: "go1.26.0"}
	other := env
	other.CPUModel, other.NumCPU = "Apple M3", 8
	run := func(rate float64, e measure.Env) *results.Study {
		l := capLoad(rate, time.Millisecond)
		l.Env = e
		return results.FromLoad(l)
	}
	study := func(e measure.Env) *results.Study {
		s := reporttest.Results(reporttest.Options{})
		s.Env = e
		return s
	}
	for _, tc := range []struct {
		name     string
		old, new *results.Study
		differ   bool
	}{
		{"runs, one machine", run(100, env), run(150, env), false},
		{"runs, two machines", run(100, env), run(150, other), true},
		{"studies, one machine", study(env), study(env), false},
		{"studies, two machines", study(env), study(other), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteAB(&b, tc.old, tc.new); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			said := strings.Contains(out, `not comparable: different machines (CPU "AMD EPYC 7B13" vs "Apple M3"; CPU count "2" vs "8")`)
			if said != tc.differ {
				t.Errorf("not comparable said: %v, want %v:\n%s", said, tc.differ, out)
			}
			changed := strings.Contains(out, "+50.0%") || strings.Contains(out, "(p=")
			if changed == tc.differ {
				t.Errorf("a change shown: %v, want %v:\n%s", changed, !tc.differ, out)
			}
		})
	}
}
