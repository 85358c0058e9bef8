// Package tick is a periodic wake-up that stays out of the Go runtime's
// timer heaps, for the loops that run for a server's whole life (the REST
// watchdog's clock, idleread's CPU sampler).
//
// While a P's timer heap holds any timer, each scheduling pass on that P
// reads the clock (the runtime's timers.check): a server switches
// goroutines several times a request, and with its background tickers the
// net/http engine spent 1.05% of its CPU samples in timers.check under
// wrk -t1 -c50, a bare net/http server (which has none) 0.15% (perf,
// 2026-11-30, docs/performance.md). On Linux a Ticker is a timerfd read
// through the netpoller: the same wake-ups, learnt from epoll as a
// socket's data is, and no runtime timer. Elsewhere, or when the kernel
// refuses a timerfd, it is a time.Ticker.
//
// A tick is as late as the netpoller is polled: at once on an idle
// process, and within the runtime's 10 ms sysmon poll when every P is busy.
package tick

import "time"

// A Ticker sends the time on C every period; like time.Ticker's, C holds
// one tick and a slow receiver misses the ones in between.
type Ticker struct {
	C    <-chan time.Time
	stop func()
	// timerfd reports whether the ticker is a timerfd (kept out of the
	// runtime's timers).
	timerfd bool
}

// New returns a Ticker of period d > 0, started.
func New(d time.Duration) *Ticker {
	if d <= 0 {
		panic("tick: non-positive period")
	}
	if t := newTimerfd(d); t != nil {
		return t
	}
	t := time.NewTicker(d)
	return &Ticker{C: t.C, stop: t.Stop}
}

// Stop stops the ticks; C is not closed.
func (t *Ticker) Stop() { t.stop() }
