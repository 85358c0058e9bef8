package load

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wirebench/wirebench/measure"
)

// The event loop is wrk's design in Go: one goroutine owns many HTTP/1.1
// connections through an epoll set of its own (level-triggered, registered
// once), so a request costs write(2) and read(2) and a share of one
// epoll_wait — no goroutine switch per request, none of wrk's two
// epoll_ctl per request.
//
// The loop blocks in epoll_wait itself, as wrk does, through RawSyscall
// (epollWaitNB) with a short timeout (loopWait). Measured alternatives:
// blocking through syscall.Syscall lets sysmon hand the P to another
// thread after 20 µs (strace: ~15k nanosleep and ~1.3k futex per 4 s);
// parking in Go's netpoller on the epoll fd costs three epoll_pwait, a
// futex and a context switch per wake-up (perf stat: 2.1 epoll_pwait and
// 0.75 context switches per request against wrk's 0.7 and 0.2). Holding
// the P while blocked is safe: the timeout bounds how long other
// goroutines (progress, timers) wait, and sysmon's preemption signal
// interrupts the wait (EINTR) so the GC can stop the loop. Raw mode in closed
// loop uses it (see Raw.loopable); every other case runs one goroutine
// per VU, which is simpler and lets a VU block in any client library.

// loopConn is one connection of a loop.
type loopConn struct {
	fd   int // -1 when not connected
	sent time.Time
	buf  []byte // bytes received, not yet parsed
	out  []byte // request bytes not yet written (short write)
	busy bool   // a request is in flight
}

// h1Loop drives conns for the runner.
type h1Loop struct {
	r     *runner
	raw   *Raw
	st    *workerStats
	wire  *measure.Bytes
	conns []loopConn
	epfd  int
	rbuf  []byte
	br    *bufio.Reader
	rd    bytes.Reader
	resp  h1Response
	body  []byte
}

// loopable reports whether raw mode can run on event loops.
func (r *Raw) loopable() bool {
	return r.h2 == nil && r.o.Client == ClientLean
}

// runLoops runs the closed-loop raw scenario on GOMAXPROCS loops sharing
// the connections, as wrk shares them among its threads.
func (r *runner) runLoops(issue, hard context.Context, raw *Raw) {
	loops := min(runtime.GOMAXPROCS(0), r.o.Concurrency)
	done := make(chan struct{}, loops)
	for i := range loops {
		n := int(Segment{I: i + 1, N: loops}.share(int64(r.o.Concurrency)))
		l := &h1Loop{r: r, raw: raw, st: r.stats[i], wire: &r.wire[i], conns: make([]loopConn, n),
			rbuf: make([]byte, 64<<10)}
		l.br = bufio.NewReaderSize(&l.rd, 64<<10)
		go func() {
			defer func() { done <- struct{}{} }()
			l.run(issue, hard)
		}()
	}
	for range loops {
		<-done
	}
}

func (l *h1Loop) run(issue, hard context.Context) {
	var err error
	if l.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err == nil {
		err = unix.SetNonblock(l.epfd, true)
	}
	if err != nil {
		l.st.fails["epoll: "+err.Error()]++
		return
	}
	defer unix.Close(l.epfd)
	for i := range l.conns {
		l.conns[i].fd = -1
	}
	defer func() {
		for i := range l.conns {
			l.closeConn(i)
		}
	}()
	issuing := true
	for i := range l.conns {
		if !l.send(issue, i) {
			issuing = false
			break
		}
	}
	events := make([]unix.EpollEvent, len(l.conns))
	lastScan := time.Now()
	for {
		if issuing && issue.Err() != nil {
			issuing = false
		}
		if hard.Err() != nil {
			for i := range l.conns {
				if l.conns[i].busy {
					l.st.interrupted++
				}
			}
			return
		}
		if !issuing && l.inFlight() == 0 {
			return
		}
		n, err := epollWaitNB(l.epfd, events, loopWait)
		if err != nil && err != unix.EINTR {
			l.st.fails["epoll: "+err.Error()]++
			return
		}
		for _, ev := range events[:max(n, 0)] {
			i := int(ev.Pad) // connection index, stored at registration
			if ev.Events&unix.EPOLLOUT != 0 {
				l.flush(i)
			}
			if ev.Events&(unix.EPOLLIN|unix.EPOLLERR|unix.EPOLLHUP) != 0 {
				if l.receive(i) && issuing && !l.send(issue, i) {
					issuing = false
				}
			}
		}
		if now := time.Now(); now.Sub(lastScan) > 50*time.Millisecond {
			lastScan = now
			l.expire(issue, now, &issuing)
		}
	}
}

func (l *h1Loop) inFlight() int {
	n := 0
	for i := range l.conns {
		if l.conns[i].busy {
			n++
		}
	}
	return n
}

// send claims a request and writes it on connection i, dialling first if
// needed. A failed dial is a failed request; false means the run is over.
func (l *h1Loop) send(issue context.Context, i int) bool {
	for {
		if issue.Err() != nil {
			return false
		}
		if _, ok := l.r.claim(); !ok {
			return false
		}
		c := &l.conns[i]
		c.sent = time.Now()
		if c.fd < 0 {
			if err := l.dial(issue, i); err != nil {
				if issue.Err() != nil {
					return false
				}
				l.fail(c, err)
				continue
			}
		}
		c.busy, c.buf = true, c.buf[:0]
		c.out = l.raw.wire
		l.flush(i)
		return true
	}
}

// flush writes what is left of connection i's request.
func (l *h1Loop) flush(i int) {
	c := &l.conns[i]
	for len(c.out) > 0 {
		k, err := writeNB(c.fd, c.out)
		if k > 0 {
			l.wire.Out.Add(int64(k))
			c.out = c.out[k:]
		}
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			l.watch(i, unix.EPOLL_CTL_MOD, unix.EPOLLIN|unix.EPOLLOUT)
			return
		case err != nil:
			c.out = nil
			l.fail(c, &wrappedErr{op: "write", err: err})
			l.closeConn(i)
			return
		}
	}
	if c.out != nil {
		c.out = nil
	}
}

// receive reads from connection i and, once a whole response is there,
// records it; true when the connection is free for the next request.
func (l *h1Loop) receive(i int) bool {
	c := &l.conns[i]
	k, err := readNB(c.fd, l.rbuf)
	if err == unix.EAGAIN || err == unix.EINTR {
		return false
	}
	if !c.busy { // data or EOF on an idle connection: the server hung up
		l.closeConn(i)
		return false
	}
	if err != nil {
		l.fail(c, &wrappedErr{op: "read", err: err})
		l.closeConn(i)
		return true
	}
	if k > 0 {
		l.wire.In.Add(int64(k))
		c.buf = append(c.buf, l.rbuf[:k]...)
	}
	// Parse what has arrived; io.ErrUnexpectedEOF means "not all yet".
	l.rd.Reset(c.buf)
	l.br.Reset(&l.rd)
	discard := l.raw.o.ExpectBodyContains == ""
	l.body, err = parseResponse(l.br, &l.resp, l.body, discard, l.raw.o.Method == "HEAD")
	if k > 0 && (errors.Is(err, io.ErrUnexpectedEOF) || (err == nil && l.resp.ToEOF)) {
		return false // not all there yet
	}
	t1 := time.Now()
	var o Outcome
	o.BodyOut = len(l.raw.o.Body)
	if err != nil {
		if k == 0 && len(c.buf) == 0 {
			err = io.ErrUnexpectedEOF // closed before any byte of the response
		}
		o.Fail = failReason(err)
	} else {
		o.Status, o.BodyIn = l.resp.Status, l.resp.BodyLen
		o.Fail = l.raw.check(l.resp.Status, l.resp.Body)
	}
	c.busy = false
	l.st.record(&o, t1.Sub(c.sent), t1.Sub(c.sent), 0, false)
	if err != nil || l.resp.Close || l.raw.o.NoKeepAlive || l.rd.Len()+l.br.Buffered() > 0 {
		l.closeConn(i)
	}
	return true
}

// expire fails requests older than the timeout and frees their connections.
func (l *h1Loop) expire(issue context.Context, now time.Time, issuing *bool) {
	for i := range l.conns {
		c := &l.conns[i]
		if c.busy && now.Sub(c.sent) > l.raw.o.Timeout && l.raw.o.Timeout > 0 {
			l.fail(c, errLoopTimeout)
			l.closeConn(i)
			if *issuing && !l.send(issue, i) {
				*issuing = false
			}
		}
	}
}

var errLoopTimeout = &timeoutError{}

type timeoutError struct{}

func (*timeoutError) Error() string   { return "i/o timeout" }
func (*timeoutError) Timeout() bool   { return true }
func (*timeoutError) Temporary() bool { return true }

// fail records a failed request on c.
func (l *h1Loop) fail(c *loopConn, err error) {
	c.busy = false
	o := Outcome{Fail: failReason(err)}
	d := time.Since(c.sent)
	l.st.record(&o, d, d, 0, false)
}

// dial connects with Go's dialer, then takes the socket away from Go's
// netpoller (dup, close the original) into the loop's epoll set.
func (l *h1Loop) dial(ctx context.Context, i int) error {
	d := net.Dialer{Timeout: l.raw.o.Timeout}
	conn, err := d.DialContext(ctx, "tcp", l.raw.addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	rc, err := conn.(syscall.Conn).SyscallConn()
	if err != nil {
		return err
	}
	fd := -1
	var derr error
	if err := rc.Control(func(s uintptr) { fd, derr = unix.Dup(int(s)) }); err != nil {
		return err
	}
	if derr != nil {
		return &wrappedErr{op: "dup", err: derr}
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return &wrappedErr{op: "setnonblock", err: err}
	}
	l.conns[i].fd = fd
	if err := l.watch(i, unix.EPOLL_CTL_ADD, unix.EPOLLIN); err != nil {
		unix.Close(fd)
		l.conns[i].fd = -1
		return err
	}
	return nil
}

// watch (re)registers connection i; its index travels in the event.
func (l *h1Loop) watch(i, op int, events uint32) error {
	ev := unix.EpollEvent{Events: events, Fd: int32(l.conns[i].fd), Pad: int32(i)}
	if err := unix.EpollCtl(l.epfd, op, l.conns[i].fd, &ev); err != nil {
		return &wrappedErr{op: "epoll_ctl", err: err}
	}
	return nil
}

func (l *h1Loop) closeConn(i int) {
	c := &l.conns[i]
	if c.fd >= 0 {
		unix.Close(c.fd) // also leaves the epoll set
		c.fd = -1
	}
	c.out, c.buf = nil, c.buf[:0]
}
