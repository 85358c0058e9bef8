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
	want := map[string][]string{"pkg": {"TestCheckDeclares", "TestDirect", "TestInSubtest", "TestSwitched", "TestViaHelper", "TestViaMethod"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("timing tests = %v, want %v", got, want)
	}
}

// With -skip: every timing test's name but one that another package also
// has as a test reaching no timing check (a -skip pattern matches it in
// every package, and the timing step would not run that one), and but one
// that does other work with the switch on (the main suite's work would run
// nowhere).
func TestSkipNamesLeavesSharedNames(t *testing.T) {
	got, err := skipNames("testdata")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"TestCheckDeclares", "TestDirect", "TestInSubtest", "TestViaMethod"}; !reflect.DeepEqual(got, want) {
		t.Errorf("skip names = %v, want %v", got, want)
	}
}
