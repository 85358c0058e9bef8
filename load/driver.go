package load

// Driver is how Run drives the VUs of a run. A scenario names the driver
// its VUs allow (Scenario.Driver); Run takes it when the run's options
// allow it too (pickDriver), else PerVU, which fits every scenario:
//
//	driver      VUs                                  runs when
//	PerVU       any: a goroutine per VU, blocking Do  always (open or closed loop, ramps)
//	Batches     BatchVU: Depth operations per         closed loop (ramps too)
//	            exchange (RESP pipelining, -P)
//	EventLoops  raw mode over lean HTTP/1.1           closed loop, no stages, Options.EventLoop
//	            (h1loop.go: wrk-style epoll loops)
//
// Every driver records into the same per-worker stats (stats.go) with the
// same clock reads, so a result does not say which one ran but in its
// client CPU.
type Driver int

const (
	// PerVU runs each VU in a goroutine of its own (run.go, work).
	PerVU Driver = iota
	// Batches runs each VU's operations in batches of its depth
	// (kv_batch.go, workBatch); its VUs implement BatchVU.
	Batches
	// EventLoops runs raw mode's connections on GOMAXPROCS event loops
	// (h1loop.go, runLoops); only *Raw names it.
	EventLoops
)

func (d Driver) String() string {
	switch d {
	case Batches:
		return "batches"
	case EventLoops:
		return "event loops"
	}
	return "per VU"
}

// pickDriver is the one place a run's driver is chosen.
func pickDriver(o *Options, sc Scenario) Driver {
	switch d := sc.Driver(); {
	case d == EventLoops && o.EventLoop && !o.OpenLoop() && len(o.Stages) == 0:
		return EventLoops
	case d == Batches && !o.OpenLoop():
		return Batches
	}
	return PerVU
}
