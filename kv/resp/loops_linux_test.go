//go:build linux

package resp

import (
	"fmt"
	"golang.org/x/sys/unix"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/kv"
)

// loopsWithSpareP starts the loop engine on a store of its own with one
// P more than the CPUs (as serve runs a server on one CPU with two): the
// caller closes it; the store and GOMAXPROCS are restored at cleanup.
func loopsWithSpareP(t *testing.T) *Server {
	t.Helper()
	prev := runtime.GOMAXPROCS(runtime.NumCPU() + 1)
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) })
	st, err := kv.Open(kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv, err := Listen("127.0.0.1:0", st, Options{Engine: EngineLoop})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// More Ps than CPUs (serve gives a server on one CPU two) still makes
// one event loop per CPU: two loops on one CPU split the connections and
// the AOF's batches between them.
func TestLoopsNoMoreThanCPUs(t *testing.T) {
	cpus := runtime.NumCPU()
	srv := loopsWithSpareP(t)
	defer srv.Close()
	if n := len(srv.loops); n != cpus {
		t.Fatalf("%d event loops with %d Ps on %d CPUs, want %d", n, cpus+1, cpus, cpus)
	}
}

// TestLoopWaitsInEpollItself: with a P to spare (serve gives a server on
// one CPU two) each loop waits in epoll_wait itself, so no epoll set in
// the process (the runtime's netpoller's) watches a loop's set: nested,
// every request that makes a socket ready runs the outer set's wake-up
// too, in the client's write. It serves a pipeline and closes promptly
// (an eventfd ends the blocking wait).
func TestLoopWaitsInEpollItself(t *testing.T) {
	cpus := runtime.NumCPU()
	srv := loopsWithSpareP(t)
	closed := false
	defer func() {
		if !closed {
			srv.Close()
		}
	}()
	c, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Minute)) // a guard, not a measure
	if _, err := io.WriteString(c, "SET k v\r\nGET k\r\nPING\r\n"); err != nil {
		t.Fatal(err)
	}
	want := "+OK\r\n$1\r\nv\r\n+PONG\r\n"
	got := make([]byte, len(want))
	if _, err := io.ReadFull(c, got); err != nil || string(got) != want {
		t.Fatalf("pipeline: %q, %v; want %q", got, err, want)
	}
	loopFDs := map[int]bool{}
	for _, l := range srv.loops {
		if !l.block {
			t.Fatalf("loop with %d Ps for %d loops waits in the netpoller", cpus+1, len(srv.loops))
		}
		loopFDs[l.epfd] = true
	}
	sets, watched := epollTargets(t)
	if sets < len(loopFDs) {
		t.Fatalf("found %d epoll sets, fewer than the %d loops'", sets, len(loopFDs))
	}
	for _, fd := range watched {
		if loopFDs[fd] {
			t.Errorf("the loops' epoll set (fd %d) is watched by another epoll set: nested in the netpoller", fd)
		}
	}
	done := make(chan error, 1)
	go func() { done <- srv.Close() }()
	select {
	case <-done:
		closed = true
	case <-time.After(time.Minute):
		t.Fatal("Close did not end the loops' blocking waits")
	}
	// A loop already shut (its wake descriptor closed) must not wake
	// again on a later stop: the number may be reused by then. Eventfds
	// opened now take the lowest free numbers, the wakes' among them,
	// and count any write.
	var fds []int
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	for range 16 {
		fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
		if err != nil {
			t.Fatal(err)
		}
		fds = append(fds, fd)
	}
	for _, l := range srv.loops {
		l.stop()
	}
	for _, fd := range fds {
		var b [8]byte
		if n, err := unix.Read(fd, b[:]); n > 0 {
			t.Errorf("a stop after its loop shut wrote to fd %d, opened since", fd)
		} else if err != unix.EAGAIN {
			t.Errorf("reading eventfd %d: %d, %v", fd, n, err)
		}
	}
}

// epollTargets counts this process's epoll sets and lists the
// descriptors they watch (/proc/self/fdinfo's "tfd:" lines).
func epollTargets(t *testing.T) (sets int, tfds []int) {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		link, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil || link != "anon_inode:[eventpoll]" {
			continue
		}
		info, err := os.ReadFile("/proc/self/fdinfo/" + e.Name())
		if err != nil {
			continue
		}
		sets++
		for line := range strings.Lines(string(info)) {
			var fd int
			if _, err := fmt.Sscanf(line, "tfd: %d", &fd); err == nil {
				tfds = append(tfds, fd)
			}
		}
	}
	return sets, tfds
}
