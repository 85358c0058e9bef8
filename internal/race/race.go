//go:build race

// Package race tells tests whether the race detector is on. Under it
// sync.Pool drops a share of what is put back on purpose (allocation
// counts mean nothing) and CPU-bound work runs several times slower, so
// tests that bound such work in time scale their bounds by Slowdown.
package race

// Enabled: built with -race.
const Enabled = true

// Slowdown is the factor for time bounds on CPU-bound work.
const Slowdown = 10
