//go:build linux

package resp

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/wirebench/wirebench/kv/access"
)

// defaultEngine is the event loop where epoll is.
const defaultEngine = EngineLoop

// loopEvents is how many ready connections one pass takes; more wait for
// the next pass.
const loopEvents = 1024

// loop is the event-loop engine, redis-server's shape: one goroutine owns
// its connections' sockets in an epoll set of its own. A pass reads every
// readable connection once and runs what it brought; then, as
// redis-server's beforeSleep, it sends the replies that wait for nothing,
// settles the AOF once for all the pass's writes (one write and, under
// always, one fsync: the first Wait leads the group commit, the others
// find their writes done) and sends the rest. With a goroutine per
// connection the batch was whatever the scheduler had run when the
// leader's turn came: under always a fifth of the fsyncs covered fewer
// than 20 writes where redis-server's covered 25-30 (docs/kv.md). The
// loop parks in Go's netpoller on the epoll descriptor itself, so the
// rest of the process runs while it waits.
//
// Where the process has a P to spare (serve gives a server on one CPU
// two Ps, and starts one loop per CPU), the loop instead waits in
// epoll_wait itself, as redis-server's thread: one epoll call a pass
// where parking took two (the netpoller's, then the loop's own) plus the
// scheduler's park and wake-up, and no epoll set nested in the
// runtime's. Nesting costs the peer: each request that makes a socket
// ready runs the runtime set's wake-up callback too, in the sender's
// system call (a loopback write; +95 ns a write in a socketpair-free
// microbenchmark of 50 TCP connections, 3,301-3,336 against
// 3,411-3,451 ns a write and read; docs/kv.md). The spare P is what
// keeps the blocking wait cheap: the monitor thread (sysmon) takes a P
// from a system call that outlasts one of its ticks only when no P is
// idle, or after 10 ms; with one P it took it from waits of tens of
// microseconds and started another thread, again and again.
type loop struct {
	s    *Server
	epfd int
	// block: the loop waits in epoll_wait itself (a spare P runs the
	// rest of the process meanwhile), else it parks in Go's netpoller on
	// ep. wake (an eventfd in the set) ends a blocking wait at stop.
	block  bool
	wake   int
	ep     *os.File // epfd, pollable: the netpoller waits on it (!block)
	mu     sync.Mutex
	conns  map[int32]*loopConn // guarded by mu (accept adds)
	closed bool                // guarded by mu
	events []unix.EpollEvent
	batch  []*loopConn
	ready  []*loopConn
}

// loopConn is one connection of a loop; only the loop's goroutine
// touches it after add.
type loopConn struct {
	fd    int
	ev    uint32 // this pass's events
	sess  *Session
	rd    reqReader
	out   []byte // replies the socket did not take yet; reading waits
	dead  bool
	queue bool // in this pass's ready list
}

// startLoops starts n loops (loopCount: one per P, at most one per CPU):
// a server pinned to one CPU has one loop, as redis-server's one thread.
func (s *Server) startLoops(n int) error {
	// A blocking wait holds its P: only with one to spare (sysmon
	// leaves an idle process's others alone for 10 ms).
	block := runtime.GOMAXPROCS(0) > n
	for range n {
		l, err := newLoop(s, block)
		if err != nil {
			for _, o := range s.loops {
				o.stop()
			}
			return err
		}
		s.loops = append(s.loops, l)
		s.wg.Add(1)
		go l.run()
	}
	return nil
}

func newLoop(s *Server, block bool) (*loop, error) {
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("resp: epoll: %w", err)
	}
	l := &loop{s: s, epfd: fd, block: block, wake: -1,
		conns: map[int32]*loopConn{}, events: make([]unix.EpollEvent, loopEvents)}
	if block {
		// Kept blocking and out of the netpoller: the loop's own wait.
		if l.wake, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("resp: eventfd: %w", err)
		}
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(l.wake)}
		if err := unix.EpollCtl(fd, unix.EPOLL_CTL_ADD, l.wake, &ev); err != nil {
			unix.Close(l.wake)
			unix.Close(fd)
			return nil, fmt.Errorf("resp: epoll: %w", err)
		}
		l.ep = os.NewFile(uintptr(fd), "resp-epoll")
		return l, nil
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("resp: epoll: %w", err)
	}
	// Non-blocking, so os.NewFile registers it with the netpoller.
	l.ep = os.NewFile(uintptr(fd), "resp-epoll")
	return l, nil
}

// handOff moves an accepted connection to a loop: its socket is
// duplicated and Go's copy closed, so Go's netpoller no longer reports
// it (each event would be reported twice).
func (s *Server) handOff(c net.Conn) {
	l := s.loops[int(s.nextID.Load())%len(s.loops)]
	client := access.ClientOf(c.RemoteAddr().String())
	fd, err := dupConn(c)
	c.Close()
	if err != nil {
		s.conns.Add(-1)
		return
	}
	lc := &loopConn{fd: fd, sess: s.newSession(), rd: reqReader{buf: make([]byte, 16<<10)}}
	lc.sess.client = client
	lc.sess.gathered = true
	if !l.add(lc) {
		unix.Close(fd)
		s.conns.Add(-1)
	}
}

func dupConn(c net.Conn) (int, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return -1, fmt.Errorf("resp: %T has no file descriptor", c)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1, err
	}
	nfd, derr := -1, error(nil)
	if err := rc.Control(func(fd uintptr) {
		nfd, derr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil {
		return -1, err
	}
	return nfd, derr
}

func (l *loop) add(c *loopConn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	l.conns[int32(c.fd)] = c
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(c.fd)}
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, c.fd, &ev); err != nil {
		delete(l.conns, int32(c.fd))
		return false
	}
	return true
}

// stop wakes the loop to close everything (Server.Close).
func (l *loop) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if l.block {
		// Under mu: shut closes wake under it too, so this never writes
		// to a descriptor number the process has since reused (a
		// connection's, the AOF's).
		if l.wake >= 0 {
			var one = [8]byte{1}
			unix.Write(l.wake, one[:])
		}
		return
	}
	l.ep.SetReadDeadline(time.Unix(1, 0))
}

func (l *loop) run() {
	defer l.s.wg.Done()
	defer l.shut()
	if l.block {
		l.runBlocking()
		return
	}
	rc, err := l.ep.SyscallConn()
	if err != nil {
		return
	}
	for {
		var n int
		var werr error
		err := rc.Read(func(uintptr) bool {
			for {
				n, werr = epollPoll(l.epfd, l.events)
				if werr != unix.EINTR {
					return werr != nil || n > 0
				}
			}
		})
		if err != nil || werr != nil {
			return // stopped (the deadline), or epoll failed
		}
		l.mu.Lock()
		closed := l.closed
		l.mu.Unlock()
		if closed {
			return
		}
		l.pass(l.events[:n])
	}
}

// shut closes every connection and the epoll set.
func (l *loop) shut() {
	l.mu.Lock()
	l.closed = true
	for fd, c := range l.conns {
		c.dead = true
		unix.Close(int(fd))
		l.s.conns.Add(-1)
	}
	clear(l.conns)
	if l.wake >= 0 {
		unix.Close(l.wake)
		l.wake = -1
	}
	l.mu.Unlock()
	l.ep.Close()
}

// runBlocking is run's loop for a loop that waits in epoll_wait itself:
// a system call through the runtime (entersyscall), so the P stays with
// this thread while it waits and the spare one runs everything else.
// It passes through the scheduler once a millisecond while busy: the
// monitor thread takes the P from a goroutine's system call when that
// goroutine has not been scheduled for 10 ms (it cannot preempt it
// there), and without the yield a busy loop lost its P every 10 ms, at
// a wait, and its thread with it (0.09 context switches a SET against
// 0.06, the loop's work spread over four threads).
func (l *loop) runBlocking() {
	last := time.Now()
	for {
		n, err := unix.EpollWait(l.epfd, l.events, -1)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return
		}
		l.mu.Lock()
		closed := l.closed
		l.mu.Unlock()
		if closed {
			return
		}
		l.pass(l.events[:n])
		if now := time.Now(); now.Sub(last) >= time.Millisecond {
			runtime.Gosched()
			last = now
		}
	}
}

// pass is one turn of the loop over the connections epoll reported.
func (l *loop) pass(evs []unix.EpollEvent) {
	cs := l.batch[:0]
	l.mu.Lock()
	for _, ev := range evs {
		if c := l.conns[ev.Fd]; c != nil {
			c.ev = ev.Events
			cs = append(cs, c)
		}
	}
	l.mu.Unlock()
	ready := l.ready[:0]
	for _, c := range cs {
		if c.dead {
			continue
		}
		if len(c.out) > 0 {
			if !l.drain(c) {
				continue // still blocked, or closed
			}
		} else if !l.read(c) {
			continue
		}
		l.process(c)
		if !c.dead && len(c.sess.r.b) > 0 && !c.queue {
			c.queue = true
			ready = append(ready, c)
		}
	}
	// Replies that wait for no write first, then one wait for the AOF
	// (the first finish leads it), then the rest.
	for _, c := range ready {
		if !c.dead && len(c.sess.ticks) == 0 {
			l.send(c)
		}
	}
	for _, c := range ready {
		if !c.dead && len(c.sess.r.b) > 0 {
			l.send(c)
		}
		c.queue = false
	}
	clear(cs)
	clear(ready)
	l.batch, l.ready = cs[:0], ready[:0]
}

// read reads once (epoll is level-triggered: what is left is reported
// again); false when there is nothing to run.
func (l *loop) read(c *loopConn) bool {
	if !c.rd.room() {
		c.sess.finish()
		c.sess.r.b = append(c.sess.r.b, errQueryLimit...)
		l.writeAll(c)
		l.closeConn(c)
		return false
	}
	n, err := read(c.fd, c.rd.buf[c.rd.w:])
	if err == unix.EAGAIN || err == unix.EINTR {
		return false
	}
	if n <= 0 || err != nil {
		// EOF or a reset: replies still owed go out first, as serveConn.
		if len(c.sess.r.b) > 0 {
			l.writeAll(c)
		}
		l.closeConn(c)
		return false
	}
	c.rd.w += n
	return true
}

// process runs every complete command buffered, as serveConn does; it
// stops early while the socket refuses replies.
func (l *loop) process(c *loopConn) {
	for len(c.out) == 0 {
		args, perr := c.rd.next()
		if perr != nil {
			c.sess.finish()
			c.sess.r.err(perr.Error())
			l.writeAll(c)
			l.closeConn(c)
			return
		}
		if args == nil {
			return
		}
		if !c.sess.Exec(args) {
			c.sess.finish()
			l.writeAll(c)
			l.closeConn(c)
			return
		}
		if len(c.sess.r.b) >= flushAt {
			l.send(c)
			if c.dead {
				return
			}
		}
	}
}

// send settles the replies' writes and writes them; what the socket
// does not take waits in c.out, and the connection is not read until it
// has gone (EPOLLOUT).
func (l *loop) send(c *loopConn) {
	c.sess.finish()
	b := c.sess.r.b
	n, err := write(c.fd, b)
	switch {
	case err != nil && err != unix.EAGAIN:
		l.closeConn(c)
		return
	case n < len(b):
		c.out = append(c.out[:0], b[n:]...)
		l.interest(c, unix.EPOLLOUT)
	}
	if cap(b) > 1<<20 {
		c.sess.r.b = make([]byte, 0, 4096) // do not keep a huge reply's buffer
	} else {
		c.sess.r.b = b[:0]
	}
}

// drain writes what the socket refused before; true once all is gone
// (the connection reads again).
func (l *loop) drain(c *loopConn) bool {
	n, err := write(c.fd, c.out)
	if err != nil && err != unix.EAGAIN {
		l.closeConn(c)
		return false
	}
	if n < len(c.out) {
		c.out = c.out[:copy(c.out, c.out[n:])]
		return false
	}
	if cap(c.out) > 1<<20 {
		c.out = nil
	} else {
		c.out = c.out[:0]
	}
	l.interest(c, unix.EPOLLIN)
	return !c.dead
}

// writeAll is the last write before a close: blocking is not an option,
// so what the socket does not take at once is lost, as it would be when
// the peer stopped reading.
func (l *loop) writeAll(c *loopConn) {
	if len(c.out) > 0 {
		write(c.fd, c.out)
	}
	write(c.fd, c.sess.r.b)
	c.sess.r.b = c.sess.r.b[:0]
}

func (l *loop) interest(c *loopConn, events uint32) {
	ev := unix.EpollEvent{Events: events, Fd: int32(c.fd)}
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_MOD, c.fd, &ev); err != nil {
		l.closeConn(c)
	}
}

func (l *loop) closeConn(c *loopConn) {
	if c.dead {
		return
	}
	c.dead = true
	l.mu.Lock()
	delete(l.conns, int32(c.fd))
	l.mu.Unlock()
	unix.Close(c.fd) // leaves the epoll set: the only descriptor of the socket
	l.s.conns.Add(-1)
}

// The loop's socket and epoll calls never block (non-blocking sockets,
// epoll_wait with no timeout), so they are made as raw system calls,
// without the runtime's entersyscall/exitsyscall. Through those, the
// runtime's monitor thread (sysmon) takes the P from any call it finds
// in progress on two of its ticks (20 µs apart): on a server with one P
// there is never an idle P, so it took it from socket writes the shared
// CPU had descheduled, handed it to another thread and, having taken
// one, kept polling every 20 µs instead of backing off to 10 ms. Under
// -c 50 -P 1 that was 13% of the server's CPU in sysmon and a context
// switch every 4-5 requests, against one in 40-100 for redis-server
// (perf, docs/kv.md). A signal (the profiler's, preemption) interrupts
// them with EINTR, which each retries or reports as "nothing now".

// read is one non-blocking read; EAGAIN when there is nothing.
func read(fd int, b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return -1, e
	}
	return int(n), nil
}

// write is one non-blocking write, retried on EINTR.
func write(fd int, b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	for {
		n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
		switch e {
		case 0:
			return int(n), nil
		case unix.EINTR:
			continue
		}
		return 0, e
	}
}

// epollPoll is epoll_wait that returns at once: the events ready now.
func epollPoll(epfd int, evs []unix.EpollEvent) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&evs[0])), uintptr(len(evs)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
