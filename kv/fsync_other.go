//go:build !linux

package kv

// syncHolding is f.Sync where the blocking fsync of fsync_linux.go is not
// written.
func syncHolding(f File) error { return f.Sync() }

// writeHolding is f.Write where fsync_linux.go's is not written.
func writeHolding(f File, b []byte) (int, error) { return f.Write(b) }

// ringSyncer is Linux's io_uring fsync (bgsync_linux.go).
type ringSyncer struct{}

// backgroundSync is everysec's fsync of f.
func (a *aof) backgroundSync(f File) error { return f.Sync() }

func (a *aof) closeRing() {}
