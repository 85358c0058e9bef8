package httpapi

import (
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// lowNice is the nice value of the threads that encode big replies (or
// the process's, if higher).
const lowNice = 10

// lowPrio holds the threads big replies are encoded on (runLowPriority).
var lowPrio struct {
	once sync.Once
	jobs chan func() // nil: no thread could lower its priority
}

// runLowPriority runs f on an OS thread of nice lowNice and returns when
// it has, passing on a panic of f. A big reply's encoding holds a CPU for
// tens of milliseconds; at a lower priority the kernel runs a thread
// woken by the network (the server's, or another process's) before it,
// rather than after its time slice. The threads are the process's for
// good (a thread cannot raise its priority back without privilege),
// max(1, GOMAXPROCS-1) of them: as many as the big slots.
func runLowPriority(f func()) {
	lowPrio.once.Do(startLowPriority)
	if lowPrio.jobs == nil {
		f()
		return
	}
	var p any
	done := make(chan struct{})
	lowPrio.jobs <- func() {
		defer func() { p = recover(); close(done) }()
		f()
	}
	<-done
	if p != nil {
		panic(p)
	}
}

// threadNice is the calling thread's nice value (the raw getpriority
// returns 20 - nice).
func threadNice() int {
	p, err := unix.Getpriority(unix.PRIO_PROCESS, unix.Gettid())
	if err != nil {
		return 0
	}
	return 20 - p
}

func startLowPriority() {
	n := max(1, runtime.GOMAXPROCS(0)-1)
	jobs := make(chan func())
	started := make(chan bool, n)
	for range n {
		go func() {
			// Locked for good: the goroutine never exits, its thread
			// keeps the priority and serves only these jobs.
			runtime.LockOSThread()
			if err := unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), max(threadNice(), lowNice)); err != nil {
				started <- false
				return // the thread exits with its goroutine
			}
			started <- true
			for f := range jobs {
				f()
			}
		}()
	}
	ok := 0
	for range n {
		if <-started {
			ok++
		}
	}
	if ok > 0 {
		lowPrio.jobs = jobs
	}
}
