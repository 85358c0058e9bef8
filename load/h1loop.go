package load

import (
	"context"
	"errors"
	"io"
	"net"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wirebench/wirebench/internal/rawio"
	"github.com/wirebench/wirebench/load/clientio"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/h1"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// The event loop is wrk's design in Go: one goroutine owns many HTTP/1.1
// connections through an epoll set of its own (level-triggered, registered
// once), so a request costs a send and a receive and a share of one
// epoll_wait — no goroutine switch per request, none of wrk's two
// epoll_ctl per request.
//
// The send and receive are sendto(2) and recvfrom(2) (rawio.Send, Recv),
// not write(2) and read(2): the same socket calls without the file layer
// in front (fdget_pos, rw_verify_area, the socket's read_iter and
// write_iter, ~2.6% of the client's CPU in perf). Side by side with wrk,
// 14 rounds of 3 s: 0.837 of wrk's CPU a request against 0.857 (lower in
// 13 of the 14; docs/load.md).
//
// The sockets are edge-triggered (EPOLLET): a level-triggered socket that
// was reported goes back on epoll's ready list and is polled again on the
// next epoll_wait, one tcp_poll per request for nothing (perf: ep_item_poll
// 2.6% of the client's CPU, 1.5% edge-triggered). So receive reads until
// the response is whole, EAGAIN or EOF (later bytes raise a new edge),
// and retries EINTR at once; a whole response in one read, the usual
// case, still costs one read.
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
//
// Because the loop holds its P, nothing in it may block: it connects with
// a non-blocking connect(2) of its own (a slow SYN waits in epoll, not in
// Go's dialer, which used to stall every connection of the loop), parses
// responses as they arrive (h1.Stream), and ends issuing on the clock, not
// only when the run's context says so (its timer can fire late while the
// loops hold the Ps).

// loopConn is one connection of a loop and the request on it.
type loopConn struct {
	fd         int // -1 when not connected
	sent       time.Time
	out        []byte // request bytes not yet written
	s          h1.Stream
	busy       bool // a request is in flight
	connecting bool // non-blocking connect in progress (waiting for EPOLLOUT)
	wantOut    bool // registered for EPOLLOUT
	reused     bool // a response was read on this connection before
	rcvd       bool // a byte arrived for the request in flight
	retried    bool // the request in flight was already retried once
	// werr is the request's failed write: the server may have answered
	// before reading it all (a 413 for a body over its limit) and closed,
	// so its response is read before the request counts as failed.
	werr  error
	wrote int // bytes of the request in flight written
}

// h1Loop drives conns for the runner.
type h1Loop struct {
	r        *runner
	raw      *Raw
	home     int // the loop's shard of the run's stats
	wire     *measure.Bytes
	conns    []loopConn
	epfd     int
	rbuf     []byte
	sa       *rawSockaddr
	issue    context.Context
	issueEnd time.Time // zero: no time bound
	issuing  bool
	keep     bool // keep bodies (to check them)
	noBody   bool // HEAD
}

// loopable reports whether raw mode can run on event loops.
func (r *Raw) loopable() bool {
	return r.h2 == nil && r.c.TLS == nil && r.o.Client == conn.ClientLean && !r.o.Traceparent // loops share one request
}

// runLoops runs the closed-loop raw scenario on GOMAXPROCS loops sharing
// the connections, as wrk shares them among its threads.
func (r *runner) runLoops(issue, hard context.Context, raw *Raw) {
	loops := min(runtime.GOMAXPROCS(0), r.o.Concurrency)
	// Resolve once, as wrk does: a loop connects with connect(2) itself.
	sa, err := resolveSockaddr(issue, raw.c.Addr)
	if err != nil {
		for range r.o.Concurrency {
			r.stats.record(0, &Outcome{Fail: clientio.FailReason(err)}, time.Now(), 0, 0, 0, 0, false, true)
		}
		return
	}
	var issueEnd time.Time
	if r.o.Duration > 0 {
		issueEnd = r.start.Add(r.o.Duration)
	}
	done := make(chan struct{}, loops)
	for i := range loops {
		n := int(results.Segment{I: i + 1, N: loops}.Share(int64(r.o.Concurrency)))
		l := &h1Loop{r: r, raw: raw, home: i, wire: &r.wire[i], conns: make([]loopConn, n),
			rbuf: make([]byte, 64<<10), sa: newRawSockaddr(sa), issue: issue, issueEnd: issueEnd,
			keep: raw.o.ExpectBodyContains != "", noBody: raw.o.Method == "HEAD"}
		go func() {
			defer func() { done <- struct{}{} }()
			l.run(hard)
		}()
	}
	for range loops {
		<-done
	}
}

func resolveSockaddr(ctx context.Context, addr string) (unix.Sockaddr, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ap, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	pn, err := net.DefaultResolver.LookupPort(ctx, "tcp", port)
	if err != nil {
		return nil, err
	}
	// The loop has no Happy Eyeballs fallback: prefer IPv4, which a
	// server on "localhost" most often listens on.
	ip := ap[0].Unmap()
	for _, a := range ap {
		if a.Unmap().Is4() {
			ip = a.Unmap()
			break
		}
	}
	if ip.Is4() {
		return &unix.SockaddrInet4{Port: pn, Addr: ip.As4()}, nil
	}
	return &unix.SockaddrInet6{Port: pn, Addr: ip.As16()}, nil
}

func (l *h1Loop) run(hard context.Context) {
	var err error
	if l.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err == nil {
		err = unix.SetNonblock(l.epfd, true)
	}
	if err != nil {
		l.r.stats.fail(l.home, "epoll: "+err.Error())
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
	l.issuing = true
	for i := range l.conns {
		if !l.send(i) {
			l.issuing = false
			break
		}
	}
	events := make([]unix.EpollEvent, len(l.conns))
	lastScan := time.Now()
	for {
		if hard.Err() != nil {
			for i := range l.conns {
				if l.conns[i].busy {
					l.r.stats.interrupted(l.home, 1, false)
				}
			}
			return
		}
		// One clock read a turn serves the end of issuing and the
		// timeout scan (it used to be two).
		now := time.Now()
		if l.issuing && !l.mayIssue(now) {
			l.issuing = false
		}
		if now.Sub(lastScan) > 50*time.Millisecond {
			lastScan = now
			l.expire(now)
		}
		if !l.issuing && l.inFlight() == 0 {
			return
		}
		n, err := epollWaitNB(l.epfd, events, loopWait)
		if err != nil && err != unix.EINTR {
			l.r.stats.fail(l.home, "epoll: "+err.Error())
			return
		}
		for _, ev := range events[:max(n, 0)] {
			if l.event(int(ev.Pad), ev.Events) {
				l.next(int(ev.Pad))
			}
		}
	}
}

// event handles readiness on connection i (its index travels in the
// event); true when the connection is free for the next request.
func (l *h1Loop) event(i int, ev uint32) bool {
	c := &l.conns[i]
	if c.fd < 0 {
		return false
	}
	if c.connecting {
		if ev&(unix.EPOLLOUT|unix.EPOLLERR|unix.EPOLLHUP) != 0 {
			return l.connected(i)
		}
		return false
	}
	if ev&unix.EPOLLOUT != 0 && len(c.out) > 0 {
		if err := l.flush(i); err != nil {
			return !l.broken(i, err)
		}
	}
	if ev&(unix.EPOLLIN|unix.EPOLLERR|unix.EPOLLHUP) != 0 {
		return l.receive(i)
	}
	return false
}

// mayIssue reports whether new requests may start: the issue context is
// live and its deadline has not passed. The deadline is checked on the
// clock, not only through the context, whose timer may fire late while
// the loops hold the Ps: requests started in that gap used to fail at
// once in the dialer ("i/o timeout") and were counted as failures.
func (l *h1Loop) mayIssue(now time.Time) bool {
	return l.issue.Err() == nil && (l.issueEnd.IsZero() || now.Before(l.issueEnd))
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

// next sends the next request on free connection i while issuing.
func (l *h1Loop) next(i int) {
	if l.issuing && !l.send(i) {
		l.issuing = false
	}
}

// send claims a request and starts it on connection i. A request that
// fails at once (a refused connect) is recorded and the next one claimed;
// false means the run is over.
func (l *h1Loop) send(i int) bool {
	for {
		// One clock read is both the end-of-issuing check and the send
		// time (it was two): the claim between them is one atomic add.
		now := time.Now()
		if !l.mayIssue(now) {
			return false
		}
		if _, ok := l.r.claim(); !ok {
			return false
		}
		c := &l.conns[i]
		c.sent, c.retried = now, false
		if l.start(i) {
			return true
		}
	}
}

// start puts connection i's request on the wire, connecting first if
// needed; false if it failed at once (recorded).
func (l *h1Loop) start(i int) bool {
	c := &l.conns[i]
	c.busy, c.rcvd, c.werr, c.wrote = true, false, nil, 0
	c.s.Reset(l.keep, l.noBody)
	c.out = l.raw.wire
	if c.fd < 0 {
		if err := l.connect(i); err != nil {
			l.fail(i, err)
			return false
		}
		return true // written by connect, or by connected/flush on EPOLLOUT
	}
	if err := l.flush(i); err != nil {
		return l.broken(i, err)
	}
	return true
}

// connect starts a non-blocking connect(2): one slow SYN must not stall
// the loop's other connections. On loopback the handshake is usually
// done when connect returns, so the request is written at once and the
// socket registered for EPOLLIN only; otherwise (EAGAIN: still in
// SYN_SENT) completion arrives as EPOLLOUT and connected writes it.
func (l *h1Loop) connect(i int) error {
	fd, err := socketNB(l.sa.family)
	if err != nil {
		return &clientio.OpError{Op: "socket", Err: err}
	}
	c := &l.conns[i]
	c.fd, c.reused, c.connecting, c.wantOut = fd, false, false, false
	switch err := connectNB(fd, l.sa); err {
	case nil, unix.EINPROGRESS, unix.EINTR:
	default:
		l.closeConn(i)
		return &clientio.OpError{Op: "connect", Err: err}
	}
	// Try the request now; EAGAIN means the handshake is not done yet.
	k, err := rawio.Send(fd, c.out)
	if k > 0 {
		l.wire.Out.Add(int64(k))
		c.out, c.wrote = c.out[k:], c.wrote+k
	}
	events := uint32(unix.EPOLLIN | unix.EPOLLET)
	switch {
	case err == unix.EAGAIN || err == unix.EINTR || (err == nil && len(c.out) > 0):
		c.connecting, c.wantOut = k <= 0, true
		events |= unix.EPOLLOUT
	case err != nil:
		l.closeConn(i)
		return &clientio.OpError{Op: "connect", Err: err} // ECONNREFUSED, reported by the write
	}
	if err := l.watch(i, unix.EPOLL_CTL_ADD, events); err != nil {
		l.closeConn(i)
		return err
	}
	return nil
}

// connected finishes connection i's connect; true if it failed (the
// request is recorded and the connection free).
func (l *h1Loop) connected(i int) bool {
	c := &l.conns[i]
	soerr, err := unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err == nil && soerr != 0 {
		err = syscall.Errno(soerr)
	}
	if err != nil {
		l.closeConn(i)
		l.fail(i, &clientio.OpError{Op: "connect", Err: err})
		return true
	}
	c.connecting = false
	if err := l.flush(i); err != nil {
		return !l.broken(i, err)
	}
	return false
}

// flush writes what is left of connection i's request, watching EPOLLOUT
// only while a write is short.
func (l *h1Loop) flush(i int) error {
	c := &l.conns[i]
	for len(c.out) > 0 {
		k, err := rawio.Send(c.fd, c.out)
		if k > 0 {
			l.wire.Out.Add(int64(k))
			c.out, c.wrote = c.out[k:], c.wrote+k
		}
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			if !c.wantOut {
				c.wantOut = true
				return l.watch(i, unix.EPOLL_CTL_MOD, unix.EPOLLIN|unix.EPOLLOUT|unix.EPOLLET)
			}
			return nil
		case err != nil:
			// Stop writing and wait for the response (see werr), as curl
			// and wrk do; a socket that failed a write reports EPOLLHUP or
			// EPOLLERR, so receive runs next even if nothing came.
			c.out, c.werr = nil, &clientio.OpError{Op: "write", Err: err}
		}
	}
	if c.wantOut {
		c.wantOut = false
		return l.watch(i, unix.EPOLL_CTL_MOD, unix.EPOLLIN|unix.EPOLLET)
	}
	return nil
}

// receive reads from connection i and, once a whole response is there,
// records it; true when the connection is free for the next request.
func (l *h1Loop) receive(i int) bool {
	c := &l.conns[i]
	var (
		k           int
		done, extra bool
	)
	// Edge-triggered: read until the response is whole, the socket is
	// empty (EAGAIN) or ends (EOF). A short read is not enough: the FIN
	// behind the bytes read raises no second event, so a close-delimited
	// body would wait for the timeout. EINTR is retried at once.
	for {
		var err error
		k, err = rawio.Recv(c.fd, l.rbuf)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			return false
		}
		if !c.busy { // data or EOF on an idle connection: the server hung up
			l.closeConn(i)
			return false
		}
		if err != nil {
			return !l.broken(i, l.whyBroken(i, &clientio.OpError{Op: "read", Err: err}))
		}
		if k == 0 {
			if done, err = c.s.EOF(); err != nil {
				return !l.broken(i, l.whyBroken(i, err))
			}
		} else {
			c.rcvd = true
			l.wire.In.Add(int64(k))
			var n int
			n, done, err = c.s.Feed(l.rbuf[:k])
			extra = n < k
		}
		if err != nil {
			l.closeConn(i)
			l.fail(i, err)
			return true
		}
		if done {
			break
		}
	}
	t1 := time.Now()
	r := &c.s.Resp
	o := Outcome{BodyOut: l.raw.bodySent(c.wrote), Status: r.Status, BodyIn: r.BodyLen}
	l.raw.check(&o, r.Body)
	c.busy = false
	l.r.stats.record(l.home, &o, c.sent, t1.Sub(c.sent), t1.Sub(c.sent), 0, 0, false, true)
	// More bytes than one response: the server is out of step; start clean.
	// So is a response that came before the request was written whole: the
	// rest of it cannot be sent after it.
	if k == 0 || r.Close || l.raw.o.NoKeepAlive || extra || len(c.out) > 0 || c.werr != nil {
		l.closeConn(i)
	} else {
		c.reused = true
	}
	return true
}

// whyBroken is the cause to record when connection i ends before a
// response: its failed write if nothing arrived after it (what the old
// code reported, and what a retry on a reused connection looks for),
// else err.
func (l *h1Loop) whyBroken(i int, err error) error {
	if c := &l.conns[i]; c.werr != nil && !c.rcvd {
		return c.werr
	}
	return err
}

// broken handles connection i failing under its request with err. A
// request sent on a reused keep-alive connection that the server closed
// before any byte of the response is sent again, once, on a new
// connection: the server may close an idle connection at any time and
// our request crossed its FIN (RFC 9112 §9.3.1; browsers and net/http do
// the same for idempotent requests). Anything else is a failed request.
// True if the request is in flight again.
func (l *h1Loop) broken(i int, err error) bool {
	c := &l.conns[i]
	retry := c.reused && !c.rcvd && !c.retried && clientio.IsClosed(err)
	l.closeConn(i)
	if retry {
		c.retried = true
		l.r.stats.retried(l.home)
		return l.start(i)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = clientio.ErrClosedBefore
		if c.rcvd {
			err = clientio.ErrClosedDuring
		}
	}
	l.fail(i, err)
	return false
}

// expire fails requests (and connects) older than the timeout.
func (l *h1Loop) expire(now time.Time) {
	for i := range l.conns {
		c := &l.conns[i]
		if c.busy && now.Sub(c.sent) > l.raw.o.Timeout && l.raw.o.Timeout > 0 {
			l.closeConn(i)
			l.fail(i, errLoopTimeout)
			l.next(i)
		}
	}
}

var errLoopTimeout = &timeoutError{}

type timeoutError struct{}

func (*timeoutError) Error() string   { return "i/o timeout" }
func (*timeoutError) Timeout() bool   { return true }
func (*timeoutError) Temporary() bool { return true }

// fail records connection i's request as failed.
func (l *h1Loop) fail(i int, err error) {
	c := &l.conns[i]
	c.busy = false
	o := Outcome{Fail: clientio.FailReason(err), BodyOut: l.raw.bodySent(c.wrote)}
	d := time.Since(c.sent)
	l.r.stats.record(l.home, &o, c.sent, d, d, 0, 0, false, true)
}

// watch (re)registers connection i; its index travels in the event.
func (l *h1Loop) watch(i, op int, events uint32) error {
	ev := unix.EpollEvent{Events: events, Fd: int32(l.conns[i].fd), Pad: int32(i)}
	if err := epollCtlNB(l.epfd, op, l.conns[i].fd, &ev); err != nil {
		return &clientio.OpError{Op: "epoll_ctl", Err: err}
	}
	return nil
}

func (l *h1Loop) closeConn(i int) {
	c := &l.conns[i]
	if c.fd >= 0 {
		closeNB(c.fd) // also leaves the epoll set
		c.fd = -1
	}
	c.out, c.werr = nil, nil
	c.connecting, c.wantOut, c.reused = false, false, false
}
