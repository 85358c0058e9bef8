package study

import (
	"sync"
	"time"

	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// SampleInterval is how often the server's /proc entries are read.
const SampleInterval = 100 * time.Millisecond

// sampler reads a process's RSS and CPU from /proc/<pid> every interval,
// from the server's own PID (the Airports seed sampled whatever PID lsof
// printed first).
type sampler struct {
	pid     int
	start   time.Time
	base    time.Duration // CPU at start
	mu      sync.Mutex
	samples []results.ProcSample
	peak    int64
	stopc   chan struct{}
	done    chan struct{}
}

func startSampler(pid int, interval time.Duration) (*sampler, error) {
	first, err := measure.SampleProc(pid)
	if err != nil {
		return nil, err
	}
	s := &sampler{pid: pid, start: time.Now(), base: first.CPU(), stopc: make(chan struct{}), done: make(chan struct{})}
	s.add(first)
	go s.loop(interval)
	return s, nil
}

func (s *sampler) loop(interval time.Duration) {
	defer close(s.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-s.stopc:
			return
		case <-t.C:
			if ps, err := measure.SampleProc(s.pid); err == nil {
				s.add(ps)
			}
		}
	}
}

func (s *sampler) add(ps measure.ProcSample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.samples = append(s.samples, results.ProcSample{T: time.Since(s.start), RSS: ps.RSS, CPU: ps.CPU() - s.base})
	s.peak = max(s.peak, ps.RSS)
}

// stop takes a last sample and returns the statistics.
func (s *sampler) stop() results.ServerStats {
	close(s.stopc)
	<-s.done
	if ps, err := measure.SampleProc(s.pid); err == nil {
		s.add(ps)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	last := s.samples[len(s.samples)-1]
	return results.ServerStats{CPU: last.CPU, PeakRSS: s.peak, Samples: s.samples}
}
