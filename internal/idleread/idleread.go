// Package idleread makes a server connection's first read after a reply
// without, under load, the system call that finds nothing (issue 17).
//
// Right after a reply the client has rarely sent its next request yet, so
// that read fails (EAGAIN), parks the goroutine and is retried after the
// poller's wake-up: a system call and two scheduler hand-offs per request
// for nothing. Yielding first (runtime.Gosched) lets the other connections'
// work run, after which the request is usually there: under wrk -c50 on one
// CPU, failed reads per GET fell from 0.99 to 0.00-0.08.
//
// Yielding pays only when other goroutines are waiting for the processor.
// When none are (a client at c=1, or idle processors), Gosched comes
// straight back, and with more than one P it also wakes an idle one for
// nothing: fasthttp at c=1 on two CPUs used 47% more CPU per request. So
// the Reader yields only while yielding works: the read after a yield is
// made through the socket's syscall.RawConn, which tells whether it had
// to wait; each wait doubles the number of reads made without a yield
// (up to 63) before the next try, and a read that found its request
// resets it.
package idleread

import (
	"io"
	"net"
	"os"
	"runtime"
	"syscall"
)

// maxShift bounds the backoff: at most 2^maxShift-1 reads without a yield
// between two tries, so a connection that becomes busy yields again soon.
const maxShift = 6

// Reader makes a connection's reads after a reply. Its zero value fails
// its reads; Init readies it in place (it keeps a pointer to itself, so it
// must not be copied after). It is used from one goroutine at a time.
type Reader struct {
	nc    net.Conn
	raw   syscall.RawConn // nil: not a socket; plain reads
	skip  uint8           // reads left before the next yield
	shift uint8           // the backoff's exponent
	// yields counts the yields; waits, the reads after one that still
	// had to wait.
	yields, waits uint64

	// One read through raw: attempt, bound once (a closure per read
	// would be allocated on every read), and its arguments and results.
	attemptFn func(uintptr) bool
	p         []byte
	n         int
	errno     error
	waited    bool
}

// Init readies r to read nc. A connection that is not a socket (a pipe in
// a test) gets plain reads.
func (r *Reader) Init(nc net.Conn) {
	*r = Reader{nc: nc}
	if sc, ok := nc.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			r.raw = raw
			r.attemptFn = r.attempt
		}
	}
}

// Stats returns the yields made and, of them, the reads that still waited.
func (r *Reader) Stats() (yields, waits uint64) { return r.yields, r.waits }

// New returns a Reader of nc. A connection that is not a socket (a pipe in
// a test) gets plain reads.
func New(nc net.Conn) Reader {
	r := Reader{nc: nc}
	if sc, ok := nc.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			r.raw = raw
		}
	}
	return r
}

// Read reads as nc.Read does, after a yield if yielding has been paying.
func (r *Reader) Read(p []byte) (int, error) {
	if r.raw == nil || len(p) == 0 {
		if r.nc == nil {
			return 0, io.ErrClosedPipe
		}
		return r.nc.Read(p)
	}
	if r.skip > 0 {
		r.skip--
		return r.nc.Read(p)
	}
	runtime.Gosched()
	r.yields++
	n, waited, err := r.read(p)
	if waited {
		r.waits++
		r.shift = min(r.shift+1, maxShift)
		r.skip = 1<<r.shift - 1
	} else {
		r.shift = 0
	}
	return n, err
}

// read is net.Conn's Read made through the RawConn, reporting whether the
// first attempt found nothing. Its errors are net's: a deadline or a
// closed connection as the RawConn reports them (a *net.OpError), an end
// of stream as io.EOF, a failed read(2) as a *net.OpError of
// *os.SyscallError.
func (r *Reader) read(p []byte) (int, bool, error) {
	r.p, r.n, r.errno, r.waited = p, 0, nil, false
	rerr := r.raw.Read(r.attemptFn)
	n, errno, waited := r.n, r.errno, r.waited
	r.p, r.errno = nil, nil
	switch {
	case rerr != nil:
		return 0, waited, rerr
	case errno != nil:
		return 0, waited, &net.OpError{Op: "read", Net: r.nc.LocalAddr().Network(),
			Source: r.nc.LocalAddr(), Addr: r.nc.RemoteAddr(), Err: os.NewSyscallError("read", errno)}
	case n <= 0:
		return 0, waited, io.EOF
	}
	return n, waited, nil
}

// attempt is one read(2) for the RawConn; false asks it to wait in the
// poller and call again.
func (r *Reader) attempt(fd uintptr) bool {
	for {
		r.n, r.errno = syscall.Read(int(fd), r.p)
		if r.errno != syscall.EINTR {
			break
		}
	}
	if r.errno == syscall.EAGAIN {
		r.waited = true
		return false
	}
	return true
}
