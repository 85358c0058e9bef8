package main

import (
	"time"

	"github.com/wirebench/wirebench/load/flags"
	"github.com/wirebench/wirebench/server"
)

// The CLI's numbers each have a range (docs/limits.md); a value outside it
// is a usage error naming the flag, the value and the range, before
// anything is allocated or started.

// Limits of flags that are the CLI's own (load's are load.Max*).
const (
	maxMergeWait  = 24 * time.Hour
	maxTOONIndent = 64
	maxSeed       = 1_000_000 // serve --seed-users, --seed-todos: each list is served whole
	maxRateLimit  = 1e9       // serve --rate-limit, per second per client
)

// checkServeLimits bounds serve's numbers that size work done before it
// listens: --seed-users 9223372036854775807 looped for ever in the seed,
// deaf to SIGTERM. (Its other numbers are checked in serve.go.)
func checkServeLimits(o *server.Options) error {
	for _, err := range []error{
		flags.CheckInt("--seed-users", int64(o.SeedUsers), 0, maxSeed, ""),
		flags.CheckInt("--seed-todos", int64(o.SeedTodos), 0, maxSeed, ""),
		flags.CheckFloat("--rate-limit", o.RateLimit, 0, maxRateLimit),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}
