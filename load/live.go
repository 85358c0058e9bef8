package load

import (
	"time"

	"github.com/wirebench/wirebench/measure"
)

// Progress is the state of a run so far, for a live status line.
type Progress struct {
	Elapsed  time.Duration
	Requests int64
	Failed   int64
	RPS      float64 // over the last interval
	P50, P99 time.Duration
}

// startLive calls Options.Progress once a second until stop is called.
// It reads the workers' histograms under their (otherwise uncontended)
// locks and merges them into a scratch histogram.
func (r *runner) startLive() (stop func()) {
	if r.o.Progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		h := measure.NewHistogram()
		var last int64
		lastAt := r.start
		for {
			select {
			case <-done:
				return
			case now := <-tick.C:
				h.Reset()
				var p Progress
				for _, st := range r.stats {
					st.mu.Lock()
					h.Merge(st.lat)
					st.mu.Unlock()
					p.Requests += st.requests.Load()
					p.Failed += st.failed.Load()
				}
				p.Elapsed = now.Sub(r.start)
				p.RPS = float64(p.Requests-last) / now.Sub(lastAt).Seconds()
				last, lastAt = p.Requests, now
				p.P50, p.P99 = h.Quantile(0.5), h.Quantile(0.99)
				r.o.Progress(p)
			}
		}
	}()
	return func() { close(done); <-finished }
}
