package measure

import (
	"testing"
	"time"
)

func TestParseCPUStat(t *testing.T) {
	a, err := parseCPUStat([]byte("cpu  10 0 10 100 0 0 0 0 0 0\ncpu0 5 1 4 50 2 1 1 3 0 0\ncpu1 5 0 5 50 0 0 0 0 0 0\nintr 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := parseCPUStat([]byte("cpu0 105 1 4 50 2 1 1 53 0 0\ncpu1 5 0 5 150 0 0 0 0 0 0\n"))
	tick := 10 * time.Millisecond
	if got := a[0]; got.Busy != 12*tick || got.Steal != 3*tick || got.Total != 67*tick {
		t.Errorf("cpu0 %+v", got)
	}
	if d := b.Since(a, []int{0}); d.Busy != 100*tick || d.Steal != 50*tick || d.Total != 150*tick {
		t.Errorf("cpu0 delta %+v", d)
	}
	if d := b.Since(a, nil); d.Busy != 100*tick || d.Total != 250*tick {
		t.Errorf("all CPUs delta %+v", d)
	}
	if _, err := parseCPUStat([]byte("intr 1\n")); err == nil {
		t.Error("no per-CPU line accepted")
	}
	if s, err := ReadCPUStat(); err != nil || len(s) == 0 {
		t.Errorf("ReadCPUStat: %v %v", s, err)
	}
}
