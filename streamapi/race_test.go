//go:build race

package streamapi_test

// raceEnabled: the race detector is on. It makes sync.Pool drop a share
// of what is put back on purpose (so allocation counts mean nothing) and
// CPU-bound work several times slower.
const raceEnabled = true
