//go:build !linux || !(amd64 || arm64)

package kv

// ringSyncer is io_uring's fsync where internal/uring is written
// (bgsync_linux.go).
type ringSyncer struct{}

// backgroundSync is everysec's fsync of f.
func (a *aof) backgroundSync(f File) error { return f.Sync() }

// rewriteSync is the rewrite's fsync of its file and of the directory.
func (a *aof) rewriteSync(f File) error { return f.Sync() }

func (a *aof) closeRing() {}
