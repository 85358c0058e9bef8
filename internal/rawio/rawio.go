// Package rawio reads and writes TCP sockets with raw system calls made
// through their syscall.RawConn, blocking in Go's poller as net.Conn does.
// The load client's connections use it (issue 17).
//
// Why: Go's sockets are non-blocking, so read(2) and write(2) on them
// never block, yet net.Conn tells the runtime of each call (entersyscall,
// exitsyscall). When the process has been idle, as a client at c=1 is
// between requests, the first such call wakes the runtime's sysmon thread
// from its idle sleep (a futex), which then polls with nanosleeps on the
// same CPU; and a loopback write, which delivers the segment to the peer
// inside the call, can last long enough for sysmon to hand the P to
// another thread. The lean gRPC client paid 0.6 futex and 0.7 nanosleep
// calls per call before it used this; RawSyscall tells the runtime
// nothing.
//
// Not used by the reference server: tried there (2-CPU AMD EPYC VM,
// 2026-11-25), it removed the server's futex, nanosleep and sched_yield
// calls at c=1 (0.8, 0.5 and 0.35 per request) and two of its three
// context switches, yet REST's p50 at c=1 rose (73-85 µs to 83-102 µs in
// three paired bench/grpc-p50.sh runs; sysmon's polling had kept the
// server's CPU from halting between requests) and CPU per request at
// saturation rose 2-5% in the judge's shape (bench/engine-cpu.sh).
package rawio

import (
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/wirebench/wirebench/measure"
)

// Read is read(2) on a non-blocking descriptor without telling the
// runtime: it must not be called on a descriptor that can block. On an
// error it returns 0, as io.Reader does.
func Read(fd int, p []byte) (int, error) { return rawRW(unix.SYS_READ, fd, p) }

// Write is write(2) on a non-blocking descriptor without telling the
// runtime, as Read.
func Write(fd int, p []byte) (int, error) { return rawRW(unix.SYS_WRITE, fd, p) }

// Recv is recvfrom(2) on a non-blocking socket without telling the
// runtime, as Read: the same bytes, 0 at EOF, the same errors. On a
// socket it is cheaper than read(2), which goes through the file layer
// (fdget_pos, rw_verify_area, the socket's read_iter) to reach the same
// sock_recvmsg.
func Recv(fd int, p []byte) (int, error) { return rawSock(unix.SYS_RECVFROM, fd, p, 0) }

// Send is sendto(2) on a connected non-blocking socket without telling
// the runtime, as Write, and for Recv's reason. MSG_NOSIGNAL: a peer that
// closed is EPIPE without a SIGPIPE raised first.
func Send(fd int, p []byte) (int, error) {
	return rawSock(unix.SYS_SENDTO, fd, p, unix.MSG_NOSIGNAL)
}

// rawSock is recvfrom(2) or sendto(2) (trap) of p on fd with flags, no
// address, through RawSyscall6.
func rawSock(trap uintptr, fd int, p []byte, flags int) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, e := unix.RawSyscall6(trap, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), uintptr(flags), 0, 0)
	if e != 0 {
		return 0, Errno(e)
	}
	return int(n), nil
}

// rawRW is read(2) or write(2) (trap) of p on fd through RawSyscall.
func rawRW(trap uintptr, fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, e := unix.RawSyscall(trap, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return 0, Errno(e)
	}
	return int(n), nil
}

// Errno returns e as an error, the common ones without allocating.
func Errno(e syscall.Errno) error {
	switch e {
	case unix.EAGAIN:
		return unix.EAGAIN
	case unix.EINTR:
		return unix.EINTR
	}
	return e
}

// Conn is a TCP connection whose Read and Write are raw system calls (see
// the package comment); everything else is the *net.TCPConn's, and
// deadlines and Close work as for it. Errors have net.Conn's shape: a
// *net.OpError with Op "read" or "write". Safe for concurrent use as
// net.Conn is.
//
// Bytes can also be queued (Queue) to be written by the next Read before
// it waits, so that a request and the wait for its reply cost one write
// and one read, as in wrk: see Queue.
type Conn struct {
	*net.TCPConn
	rc   syscall.RawConn
	rmu  sync.Mutex // one Read at a time: r is the Read's state
	wmu  sync.Mutex // one write at a time: w, q, qn and waitFirst are its state
	r, w op

	q         []byte      // queued bytes; q[:qn] are written
	qn        int         //
	queued    atomic.Bool // len(q) > qn, for Read's check without wmu
	waitFirst bool        // the Read that writes q waits before reading
	n         *measure.Bytes

	reads, eagain, writes atomic.Int64 // system calls made: Stats
}

// Stats is what a Conn's system calls were.
type Stats struct {
	Reads  int64 // read(2) calls
	EAGAIN int64 // of which found nothing to read
	Writes int64 // write(2) calls
}

// Stats returns the system calls made so far: a test's, or a report's,
// view of what a request costs.
func (c *Conn) Stats() Stats {
	return Stats{Reads: c.reads.Load(), EAGAIN: c.eagain.Load(), Writes: c.writes.Load()}
}

// op is the state of a Read or Write in progress, kept in the Conn so that
// its function, bound once, allocates nothing per call.
type op struct {
	p       []byte
	k       int
	err     error // an errno
	werr    error // a Read's error writing the queue
	partial bool  // a Read wrote part of the queue: the rest blocks
	fn      func(fd uintptr) bool
}

// Wrap returns c as a *Conn when it is a *net.TCPConn, c itself otherwise.
func Wrap(c net.Conn) (net.Conn, error) {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c, nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil, err
	}
	rio := &Conn{TCPConn: tc, rc: rc}
	rio.r.fn, rio.w.fn = rio.read, rio.write
	return rio, nil
}

// Listener returns ln with each accepted TCP connection wrapped (Wrap).
func Listener(ln net.Listener) net.Listener { return listener{ln} }

type listener struct{ net.Listener }

func (l listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	w, err := Wrap(c)
	if err != nil {
		c.Close()
		return nil, err
	}
	return w, nil
}

// Count makes the connection add the bytes it reads to n.In and those it
// writes to n.Out (nil: none). Call it before the connection is used.
func (c *Conn) Count(n *measure.Bytes) { c.n = n }

// Queue copies p to be written before the next Read waits, or by the
// next Write or Flush if one comes first. With waitFirst, that Read,
// having written, waits for the poller before it tries read(2):
// RawConn.Read resets the poller's readiness on entry, so whatever
// arrives after the write wakes it, and the read(2) that would have met
// EAGAIN (the reply cannot be there microseconds after the request) is
// not made. Bytes that had arrived before and were left unread then wait
// for the next arrival: waitFirst is for a caller that knows a reply to
// what it queued is coming, and nothing else it needs sooner.
//
// Whoever queues must then Read (or Flush): a Read already waiting in
// another goroutine does not see the queue.
func (c *Conn) Queue(p []byte, waitFirst bool) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.qn == len(c.q) {
		c.q, c.qn = c.q[:0], 0
	}
	c.q = append(c.q, p...)
	c.waitFirst = waitFirst
	c.queued.Store(len(c.q) > c.qn)
}

// Flush writes the queued bytes, blocking until they are written.
func (c *Conn) Flush() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := c.flushLocked(); err != nil {
		return c.opError("write", err)
	}
	return nil
}

// flushLocked writes the queue with the blocking write; wmu is held. The
// error is RawConn's or a *os.SyscallError.
func (c *Conn) flushLocked() (int, error) {
	if c.qn == len(c.q) {
		return 0, nil
	}
	k, err := c.writeLocked(c.q[c.qn:])
	c.qn += k
	c.queued.Store(len(c.q) > c.qn)
	return k, err
}

// writeQueued writes what it can of the queue without blocking, from
// inside a Read; wmu is held. EAGAIN: part is left.
func (c *Conn) writeQueued(fd uintptr) error {
	err := c.writeFrom(fd, c.q, &c.qn)
	c.queued.Store(len(c.q) > c.qn)
	return err
}

// writeFrom writes p[*off:] with write(2) until all is written or a call
// fails with other than EINTR (EAGAIN: the socket is full), advancing
// *off and the counters.
func (c *Conn) writeFrom(fd uintptr, p []byte, off *int) error {
	for *off < len(p) {
		k, err := Write(int(fd), p[*off:])
		c.writes.Add(1)
		switch err {
		case nil:
			*off += k
			c.countOut(k)
		case unix.EINTR:
		default:
			return err
		}
	}
	return nil
}

func (c *Conn) countIn(k int) {
	if c.n != nil && k > 0 {
		c.n.In.Add(int64(k))
	}
}

func (c *Conn) countOut(k int) {
	if c.n != nil && k > 0 {
		c.n.Out.Add(int64(k))
	}
}

func (c *Conn) read(fd uintptr) bool {
	o := &c.r
	// A writer holding wmu writes the queue itself, before its own bytes.
	if c.queued.Load() && c.wmu.TryLock() {
		wait := c.waitFirst
		c.waitFirst = false
		err := c.writeQueued(fd)
		c.wmu.Unlock()
		switch {
		case err == unix.EAGAIN:
			o.partial = true // the socket is full: Read finishes with Flush
			return true
		case err != nil:
			o.werr = err
			return true
		case wait:
			return false // wait for the reply
		}
	}
	for {
		o.k, o.err = Read(int(fd), o.p)
		c.reads.Add(1)
		if o.err != unix.EINTR {
			break
		}
	}
	if o.err == unix.EAGAIN {
		c.eagain.Add(1)
		return false // wait for the poller
	}
	if o.err != nil {
		o.k = 0
	}
	return true
}

func (c *Conn) write(fd uintptr) bool {
	o := &c.w
	switch err := c.writeFrom(fd, o.p, &o.k); err {
	case nil:
	case unix.EAGAIN:
		return false // the send buffer is full: wait for room
	default:
		o.err = err
	}
	return true
}

// Read implements net.Conn.
func (c *Conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c.rmu.Lock()
	defer c.rmu.Unlock()
	o := &c.r
	o.p, o.k, o.err = p, 0, nil
	defer func() { o.p, o.err, o.werr = nil, nil, nil }()
	for {
		err := c.rc.Read(o.fn)
		switch {
		case err != nil: // deadline, closed connection
			return 0, c.opError("read", err)
		case o.werr != nil:
			return 0, c.opError("write", os.NewSyscallError("write", o.werr))
		case o.partial:
			o.partial = false
			if err := c.Flush(); err != nil {
				return 0, err
			}
			continue
		case o.err != nil:
			return 0, c.opError("read", os.NewSyscallError("read", o.err))
		case o.k == 0:
			return 0, io.EOF
		}
		c.countIn(o.k)
		return o.k, nil
	}
}

// Write implements net.Conn: all of p, or an error. Queued bytes are
// written first.
func (c *Conn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := c.flushLocked(); err != nil {
		return 0, c.opError("write", err)
	}
	k, err := c.writeLocked(p)
	if err != nil {
		return k, c.opError("write", err)
	}
	return k, nil
}

// writeLocked writes all of p, waiting in the poller when the socket is
// full; wmu is held.
func (c *Conn) writeLocked(p []byte) (int, error) {
	o := &c.w
	o.p, o.k, o.err = p, 0, nil
	err := c.rc.Write(o.fn)
	k, errno := o.k, o.err
	o.p, o.err = nil, nil
	switch {
	case err != nil:
		return k, err
	case errno != nil:
		return k, os.NewSyscallError("write", errno)
	}
	return k, nil
}

// opError gives err the shape net.Conn's errors have. RawConn's own errors
// (deadline, closed) are already *net.OpError, named "raw-read" or
// "raw-write": they are renamed, so that callers that tell a read error
// by its Op (net/http does) see one.
func (c *Conn) opError(name string, err error) error {
	// A type assertion, not errors.As: net/http ends every request's
	// background read with a deadline, so this runs once per request.
	if oe, ok := err.(*net.OpError); ok {
		oe.Op, oe.Source, oe.Addr = name, c.LocalAddr(), c.RemoteAddr()
		return oe
	}
	return &net.OpError{Op: name, Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}
