// Package measure holds what every wirebench measurement is made of:
// latency histograms that merge exactly, byte counters on the socket, and
// samples of a process's CPU time and memory read from /proc.
//
// Nothing here knows about protocols or scenarios; the load engine and the
// studies build on it so that every protocol is measured the same way.
package measure

import "errors"

// ErrDecode reports a serialized histogram that cannot be read back.
var ErrDecode = errors.New("measure: cannot decode histogram")

// ErrProc reports a /proc file that is missing or malformed.
var ErrProc = errors.New("measure: cannot read process sample")
