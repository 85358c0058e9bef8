//go:build !linux

package kv

// syncHolding is f.Sync where the blocking fsync of fsync_linux.go is not
// written.
func syncHolding(f File) error { return f.Sync() }
