package measure

import (
	"errors"
	"slices"
	"testing"
)

func TestParseCPUList(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want []int
	}{
		{"0", []int{0}},
		{"0-3", []int{0, 1, 2, 3}},
		{"0, 2-3", []int{0, 2, 3}},
		{"1,1", []int{1, 1}},
	} {
		if got, err := ParseCPUList(tc.in); err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "a", "3-1", "-1", "0-", "0,,1"} {
		if got, err := ParseCPUList(bad); !errors.Is(err, ErrCPUList) {
			t.Errorf("%q: %v, %v; want ErrCPUList", bad, got, err)
		}
	}
}

func FuzzParseCPUList(f *testing.F) {
	for _, s := range []string{"0", "0-3", "0,2-3", "7-5", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 6 {
			return // a range such as 0-2000000000 is valid and huge
		}
		cpus, err := ParseCPUList(s)
		if err == nil && len(cpus) == 0 {
			t.Errorf("%q: no error and no CPU", s)
		}
		for _, c := range cpus {
			if c < 0 {
				t.Errorf("%q: CPU %d", s, c)
			}
		}
	})
}
