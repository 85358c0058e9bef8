//go:build !race

package race

// Enabled: built with -race.
const Enabled = false

// Slowdown is the factor for time bounds on CPU-bound work.
const Slowdown = 1
