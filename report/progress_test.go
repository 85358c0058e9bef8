package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/results"
)

func TestCapacityProgress(t *testing.T) {
	t.Parallel()
	s := results.CapacityStep{Offered: 2000, Achieved: 1990, P50: time.Millisecond, P99: 5 * time.Millisecond,
		ClientCPU: 0.25, Verdict: results.StepFail, Disturbed: []string{"p99 above a higher rate's"}, Retried: true}
	var b bytes.Buffer
	CapacityProgress(&b, 0)(3, s)
	CapacityProgress(&b, 1000)(0, s)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "step  3") || !strings.Contains(lines[0], "→") ||
		!strings.Contains(lines[0], "fail (disturbed: p99 above a higher rate's), measured again") ||
		!strings.Contains(lines[1], "confirm  speed 2") || !strings.Contains(lines[1], "client CPU  25%") {
		t.Errorf("progress:\n%s", b.String())
	}
}
