package main

import (
	"time"
)

// The CLI's numbers each have a range (docs/limits.md); a value outside it
// is a usage error naming the flag, the value and the range, before
// anything is allocated or started.

// Limits of flags that are the CLI's own (load's are load.Max*).
const (
	maxMergeWait  = 24 * time.Hour
	maxTOONIndent = 64
)
