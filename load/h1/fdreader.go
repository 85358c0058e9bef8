package h1

import (
	"errors"
	"io"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/wirebench/wirebench/internal/rawio"
	"github.com/wirebench/wirebench/load/clientio"
	"github.com/wirebench/wirebench/measure"
)

// fdReader reads a TCP connection through its syscall.RawConn, and writes
// the next request from inside the read, so that a request costs write(2)
// and read(2) once each, as in wrk.
//
// Why: after net.Conn.Write, net.Conn.Read tries read(2) at once, gets
// EAGAIN (the response cannot be there microseconds after the write),
// parks, and reads again. Skipping that first read is only safe if the
// poller's readiness state was reset before the write: RawConn.Read resets
// it on entry, so the write is done as the first step of the read, and any
// readiness the response raises afterwards wakes the wait. Go's poller
// stays in charge: deadlines and cancellation work as for net.Conn.
//
// It counts the bytes it reads and writes into n. Not safe for concurrent use.
type fdReader struct {
	rc   syscall.RawConn
	n    *measure.Bytes
	send []byte // request to write on the next Read
	got  int    // bytes read since the owner last reset it

	// state of the call in progress, kept here so that fn, bound once,
	// allocates nothing per request
	p   []byte
	k   int
	err error
	// werr is the request's failed write. The server may have answered
	// before reading the whole request (a 413 for a body over its limit)
	// and closed: its response is read first, and werr only stands in
	// for an end of the connection before any byte of it.
	werr  error
	wrote int // bytes of the request written
	// A request longer than the socket takes at once is finished by a
	// goroutine of its own (writeRest), so that a response the server
	// sends before reading it all is read meanwhile, as wrk does. rest,
	// wrote and werr are the writer's until writing is closed; stop ends
	// its wait (a write deadline in the past).
	rest    []byte
	writing chan struct{}
	stop    func()
	stopped atomic.Bool  // by settle: the writer's error is not the request's
	left    atomic.Int64 // bytes of rest not yet written
	fn      func(fd uintptr) bool
	wfn     func(fd uintptr) bool
}

func newFDReader(rc syscall.RawConn, n *measure.Bytes, stop func()) *fdReader {
	r := &fdReader{rc: rc, n: n, stop: stop}
	r.fn, r.wfn = r.read, r.write
	return r
}

// sendWithNextRead queues req to be written by the next Read.
func (r *fdReader) sendWithNextRead(req []byte) {
	r.send, r.werr, r.wrote = req, nil, 0
	r.stopped.Store(false)
	r.left.Store(0)
}

func (r *fdReader) read(fd uintptr) bool {
	if r.send != nil {
		k, err := writeFD(fd, r.send)
		if k > 0 {
			r.n.Out.Add(int64(k))
			r.send, r.wrote = r.send[k:], r.wrote+k
		}
		switch {
		case err != nil && err != unix.EAGAIN:
			r.send, r.werr = nil, &clientio.OpError{Op: "write", Err: err} // and read what came
		case len(r.send) > 0:
			r.rest, r.send = r.send, nil
			r.left.Store(int64(len(r.rest)))
			r.writing = make(chan struct{})
			go r.writeRest(r.writing)
			// and read: nothing there yet, most likely
		default:
			r.send = nil
			return false // wait for the response
		}
	}
	for {
		r.k, r.err = rawio.Read(int(fd), r.p)
		if r.err != unix.EINTR {
			break
		}
	}
	if r.err == unix.EAGAIN {
		return false
	}
	if r.err != nil {
		r.err = &clientio.OpError{Op: "read", Err: r.err}
	}
	return true
}

// writeRest writes r.rest, waiting for the socket to drain, and closes
// done.
func (r *fdReader) writeRest(done chan struct{}) {
	defer close(done)
	if err := r.rc.Write(r.wfn); err != nil && r.werr == nil && !r.stopped.Load() {
		r.werr = err // the deadline
	}
	r.rest = nil
}

// write is writeRest's step.
func (r *fdReader) write(fd uintptr) bool {
	k, err := writeFD(fd, r.rest)
	if k > 0 {
		r.n.Out.Add(int64(k))
		r.rest, r.wrote = r.rest[k:], r.wrote+k
		r.left.Add(int64(-k))
	}
	switch {
	case err == unix.EAGAIN:
		return false
	case err != nil:
		r.werr = &clientio.OpError{Op: "write", Err: err}
		return true
	}
	return len(r.rest) == 0
}

// settle ends the request's write: it returns at once if the request was
// written whole or failed, else stops the writer and waits for it (the
// response, or the end of the connection, came before the request's
// end). True if the request is not whole on the wire: the caller closes
// the connection, whose framing is lost.
func (r *fdReader) settle() bool {
	cut := false
	if r.writing != nil {
		// A request written whole is not stopped: its writer is only
		// returning (a server answers once it has the whole request, so
		// that happens). Stopped, the connection is not used again, if
		// only for its write deadline left in the past.
		if r.left.Load() > 0 {
			select {
			case <-r.writing:
			default:
				r.stopped.Store(true)
				r.stop()
				cut = true
			}
		}
		<-r.writing
		r.writing = nil
	}
	return cut || r.left.Load() > 0 || r.werr != nil
}

func writeFD(fd uintptr, b []byte) (int, error) {
	for {
		k, err := rawio.Write(int(fd), b)
		if err != unix.EINTR {
			return max(k, 0), err
		}
	}
}

// Read implements io.Reader.
func (r *fdReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.p, r.k, r.err = p, 0, nil
	defer func() { r.p = nil }()
	if err := r.rc.Read(r.fn); err != nil {
		r.send = nil
		return 0, err // deadline, closed connection
	}
	switch {
	case r.got == 0 && (r.err != nil || r.k == 0) && r.settle() && r.werr != nil:
		return 0, r.werr
	case r.err != nil:
		return 0, r.err
	case r.k == 0:
		return 0, io.EOF
	}
	r.n.In.Add(int64(r.k))
	r.got += r.k
	return r.k, nil
}

var errNoRawConn = errors.New("load: connection has no raw file descriptor")
