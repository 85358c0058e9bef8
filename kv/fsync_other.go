//go:build !linux

package kv

// syncHolding is f.Sync where the blocking fsync of fsync_linux.go is not
// written.
func syncHolding(f File) error { return f.Sync() }

// writeHolding is f.Write where fsync_linux.go's is not written.
func writeHolding(f File, b []byte) (int, error) { return f.Write(b) }
