package main

import (
	"reflect"
	"testing"
)

// The fixture's tests reach the timing switch directly, through a helper
// two calls deep, through a method and inside a subtest; one reaches none,
// and a nested module's test is not this module's.
func TestTimingTestsFollowsHelpers(t *testing.T) {
	got, err := timingTests("testdata")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"pkg": {"TestDirect", "TestInSubtest", "TestViaHelper", "TestViaMethod"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("timing tests = %v, want %v", got, want)
	}
}
