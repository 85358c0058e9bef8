//go:build !linux

package httpapi

// runLowPriority runs f: thread priorities are Linux's here.
func runLowPriority(f func()) { f() }
