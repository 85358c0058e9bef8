package gate

import (
	"testing"

	"github.com/wirebench/wirebench/results"
)

func TestCapacityValue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		c    *results.Capacity
		want float64
		ok   bool
	}{
		{nil, 0, false},
		{&results.Capacity{Limit: results.LimitSLO, Rate: 4150}, 4150, true},
		{&results.Capacity{Limit: results.LimitMinRate}, 0, true},
		{&results.Capacity{Limit: results.LimitClient, Rate: 2000}, 0, false},
		{&results.Capacity{Limit: results.LimitMaxRate, Rate: 100000}, 0, false},
		{&results.Capacity{Limit: results.LimitTime, Rate: 1600}, 0, false},
	} {
		if got, ok := capacity(results.Trial{Capacity: tc.c}); got != tc.want || ok != tc.ok {
			t.Errorf("%+v: %v %v, want %v %v", tc.c, got, ok, tc.want, tc.ok)
		}
	}
}
