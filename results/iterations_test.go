package results

import (
	"testing"
	"time"

	"github.com/wirebench/wirebench/measure"
)

// A flow's capacity step counts iterations, the unit its schedule paces:
// 3 requests an iteration, half the scheduled iterations sent, is sent
// 0.5 and achieved 125/s of 250/s offered, not 1.0 and 375/s.
func TestCapacityStepOfIterations(t *testing.T) {
	t.Parallel()
	l := stepLoad(250, time.Millisecond, time.Millisecond) // 500 scheduled over 2 s
	l.Requests = 750
	l.Iterations = &Iterations{Count: 250, Interrupted: 0, Latency: measure.NewHistogram(), Service: measure.NewHistogram()}
	s := NewCapacityStep(250, l)
	if s.Sent != 0.5 || s.Achieved != 125 || s.Requests != 750 {
		t.Errorf("sent %v achieved %v requests %d; want 0.5, 125/s, 750", s.Sent, s.Achieved, s.Requests)
	}
	if done, _ := l.Paced(); done != 250 {
		t.Errorf("paced %d, want the 250 iterations", done)
	}
}

// Segments' iteration sections merge by sum; one without fails the merge.
func TestMergeIterations(t *testing.T) {
	t.Parallel()
	a, b := stepLoad(10, time.Millisecond, time.Millisecond), stepLoad(10, time.Millisecond, time.Millisecond)
	for i, l := range []*Load{a, b} {
		l.Iterations = &Iterations{Count: int64(5 + i), Failed: 1, Interrupted: 1, Latency: measure.NewHistogram(), Service: measure.NewHistogram()}
		l.Iterations.Latency.Record(time.Duration(i+1) * time.Millisecond)
	}
	m, err := mergeIterations([]*Load{a, b})
	if err != nil || m.Count != 11 || m.Failed != 2 || m.Interrupted != 2 || m.Latency.Count() != 2 {
		t.Fatalf("merged %+v, %v", m, err)
	}
	b.Iterations = nil
	if _, err := mergeIterations([]*Load{a, b}); err == nil {
		t.Error("merged a result with iterations and one without")
	}
}
