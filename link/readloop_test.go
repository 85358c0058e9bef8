package link

import (
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRelayOneReader: one thread reads both devices (the link starts
// three threads: link-read and a writer a direction, not a reader a
// direction), UDP echoes cross both ways through it in order, on the
// ring and on the system-call fallback, and Close ends the threads and
// their goroutines and leaves no descriptor open.
func TestRelayOneReader(t *testing.T) {
	needRoot(t)
	for _, ring := range []bool{true, false} {
		t.Run(fmt.Sprintf("ring=%v", ring), func(t *testing.T) {
			defer func(v bool) { noUring = v }(noUring)
			noUring = !ring
			testOneReader(t)
		})
	}
}

func testOneReader(t *testing.T) {
	// The echo server checks the order up; the client checks it down.
	ln, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	upOrder := make(chan error, 1)
	go func() {
		buf := make([]byte, 2048)
		for want := uint32(0); ; want++ {
			n, from, err := ln.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			if got := binary.BigEndian.Uint32(buf); got != want {
				upOrder <- fmt.Errorf("up: datagram %d came as the %dth", got, want)
				return
			}
			_, _ = ln.WriteToUDPAddrPort(buf[:n], from)
		}
	}()
	fds0 := openFDs(t)

	s, _ := Parse("")
	if s == nil {
		s = &Spec{}
	}
	l, err := Open(*s)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var c net.Conn
	if err := l.Do(func() (err error) { c, err = net.Dial("udp", ln.LocalAddr().String()); return err }); err != nil {
		t.Fatal(err)
	}
	const n = 500
	echoInOrder(t, c, n, 16, 64, 10*time.Second, func() {
		select {
		case err := <-upOrder:
			t.Fatal(err)
		default:
		}
	})
	if l.up.reads.Load() < n || l.down.reads.Load() < n || l.rd.ringRead.Load() != !noUring {
		t.Errorf("reads up %d, down %d (want %d each), through io_uring %v", l.up.reads.Load(), l.down.reads.Load(), n, l.rd.ringRead.Load())
	}
	tids := []int{l.rd.clock.running(), l.up.wclock.running(), l.down.wclock.running()}
	names := tasks(t)
	var relay []string
	for _, tid := range tids {
		relay = append(relay, names[tid])
	}
	if want := []string{"link-read", "link-write-up", "link-write-down"}; !slices.Equal(relay, want) || tids[0] == tids[1] || tids[0] == tids[2] || tids[1] == tids[2] {
		t.Errorf("the link's threads %v: %q, want %q", tids, relay, want)
	}
	for tid, name := range names {
		if strings.HasPrefix(name, "link-read-") {
			t.Errorf("thread %d is %q: a reader a direction", tid, name)
		}
	}

	c.Close()
	l.Close()
	if left := threadsLeft(tids, time.Minute); len(left) > 0 {
		t.Fatalf("the relay's threads %v live on after Close", left)
	}
	buf := make([]byte, 1<<20)
	if st := string(buf[:runtime.Stack(buf, true)]); strings.Contains(st, "link.(*relayReader)") || strings.Contains(st, "link.(*pump).write") {
		t.Errorf("relay goroutines live on after Close:\n%s", st)
	}
	// Opened since and still open (one closed meanwhile, by another
	// test's leftovers, is none of the link's).
	for _, fd := range openFDs(t) {
		if !slices.Contains(fds0, fd) {
			t.Errorf("descriptor %s open after Close, not before the link", fd)
		}
	}
	select {
	case err := <-upOrder:
		t.Fatal(err)
	default:
	}
}

// openFDs are the process's open descriptors, each with what it is.
func openFDs(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	var fds []string
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err != nil {
			continue // ReadDir's own
		}
		fds = append(fds, e.Name()+"="+target)
	}
	return fds
}

// tasks are the process's threads by id, with their names.
func tasks(t *testing.T) map[int]string {
	t.Helper()
	dirs, err := filepath.Glob("/proc/self/task/*")
	if err != nil {
		t.Fatal(err)
	}
	m := map[int]string{}
	for _, d := range dirs {
		tid, _ := strconv.Atoi(filepath.Base(d))
		b, err := os.ReadFile(filepath.Join(d, "comm"))
		if err == nil {
			m[tid] = strings.TrimSpace(string(b))
		}
	}
	return m
}

// threadsLeft waits up to guard for the threads tids to end, and returns
// those that have not. A guard, not a measurement: a locked thread exits
// just after its goroutine returns, which may be just after Close. The
// main thread, which a relay goroutine may have run on, the runtime
// never ends (it parks it): it is left out.
func threadsLeft(tids []int, guard time.Duration) []int {
	for end := time.Now().Add(guard); ; time.Sleep(time.Millisecond) {
		var left []int
		for _, tid := range tids {
			if _, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", tid)); err == nil && tid != os.Getpid() {
				left = append(left, tid)
			}
		}
		if len(left) == 0 || time.Now().After(end) {
			return left
		}
	}
}
