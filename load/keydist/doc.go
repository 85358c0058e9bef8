// Package keydist draws the keys and value sizes of a key-value load as
// cache users run it: keys uniform, sequential, Gaussian about a centre,
// or Zipf-skewed over a key space [min, max]; value sizes fixed, in a
// range, or from a weighted list. Every draw comes from a seeded PCG per
// worker (Dist.Source), so one seed sends the same keys in the same order
// to any server — the difference between two servers is then theirs.
//
// The Zipf generator is exact for every exponent s > 0, s < 1 included
// (Go's math/rand Zipf needs s > 1; zipf.go). Dist also gives what the
// load should look like (Prob, HotShare), so a run's measured traffic can
// be held against it.
//
// The package is a leaf: no engine, no client, no I/O.
package keydist
