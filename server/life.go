package server

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wirebench/wirebench/kv/resp"
)

// life is the server's lifecycle: the first listener that fails after
// Start (not because Close or Shutdown closed it) closes failed.
type life struct {
	failed  chan struct{}
	once    sync.Once
	err     error // set once, before failed closes
	closing atomic.Bool
}

func newLife() *life { return &life{failed: make(chan struct{})} }

// Failed is closed when a listener has failed after Start; Err says how.
// A caller waits on it beside its own signal to stop (as serve does).
func (l *life) Failed() <-chan struct{} { return l.failed }

// Err is the first listener failure after Start, nil if none.
func (l *life) Err() error {
	select {
	case <-l.failed:
		return l.err
	default:
		return nil
	}
}

func (l *life) stopping() { l.closing.Store(true) }

func (l *life) fail(err error) {
	if l.closing.Load() {
		return
	}
	l.once.Do(func() { l.err = err; close(l.failed) })
}

// serve runs one listener's Serve; its return, unless the server is
// closing, is a failure.
func (l *life) serve(name string, serve func() error) {
	err := ignoreClosed(serve())
	if err == nil && !l.closing.Load() {
		err = errors.New("stopped serving")
	}
	if err != nil {
		l.fail(fmt.Errorf("server: %s listener: %w", name, err))
	}
}

// watchRESP turns the RESP server's accept failure (it keeps it for a
// poll) into the server's; RESP's package offers no channel to wait on.
func (l *life) watchRESP(r *resp.Server) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-l.failed:
			return
		case <-t.C:
		}
		if l.closing.Load() {
			return
		}
		if err := r.Err(); err != nil {
			l.fail(fmt.Errorf("server: RESP listener: %w", err))
			return
		}
	}
}
