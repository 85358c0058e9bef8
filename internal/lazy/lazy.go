// Package lazy builds package-level values on first use.
//
// A package-level regexp.MustCompile runs at init in every process that
// links the package: the load client's and the studies' expressions were
// live heap in `wirebench serve` too, which every GC cycle under load marks
// again (issue 17). A value from here is built by its first caller.
package lazy

import (
	"regexp"
	"sync"
)

// Regexp returns a function that compiles expr on its first call (and
// panics then if expr is invalid, as regexp.MustCompile does) and returns
// the same *regexp.Regexp on every call. Safe for concurrent use.
func Regexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
