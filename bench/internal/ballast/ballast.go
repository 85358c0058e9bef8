// Package ballast keeps live heap in a bare yardstick server, so that it
// can be measured carrying what a larger binary's package inits keep
// (the -ballast-kb flag of bench/grpcgobare and bench/h3bare): the
// garbage collector marks it every cycle, as it marks the descriptors
// protobuf and protocompile build at init in `wirebench serve`.
package ballast

import "fmt"

// list is what Keep keeps live.
var list *node

// node is 80 bytes with pointers, as a descriptor's small structs.
type node struct {
	next *node
	s    string
	p    [4]*int
	_    [16]byte
}

// Keep adds about kb kB of small pointer-bearing objects to what stays
// live for the life of the process.
func Keep(kb int) {
	for i := range kb * 1024 / 80 {
		x := i
		list = &node{next: list, s: fmt.Sprint(i), p: [4]*int{&x}}
	}
}
