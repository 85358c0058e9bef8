package main

import "time"

// burn is the CPU time spent per request; the test rewrites this file to
// plant a cost in one revision.
const burn = 0 * time.Microsecond
