//go:build !(linux && (amd64 || arm64))

package link

// readRing: no io_uring here (internal/uring covers linux/amd64 and
// linux/arm64); the reader reads with system calls.
func (rr *relayReader) readRing(rs [2]*reader) bool { return false }
