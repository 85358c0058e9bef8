package results

import "testing"

func TestCPUList(t *testing.T) {
	for _, tc := range []struct {
		in   []int
		want string
	}{
		{nil, "any"},
		{[]int{1}, "1"},
		{[]int{0, 1, 2, 3, 6}, "0-3,6"},
		{[]int{0, 2, 3, 5, 6, 7}, "0,2-3,5-7"},
	} {
		if got := CPUList(tc.in); got != tc.want {
			t.Errorf("CPUList(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
