//go:build race

package server_test

// raceSlowdown scales the time bounds of tests whose work is CPU-bound
// (encoding lists of 60,000 users): the race detector makes that work
// several times slower, and a bound that fits the plain build fails on it
// without any bug.
const raceSlowdown = 10
