package load

import (
	"errors"
	"io"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/wirebench/wirebench/internal/rawio"
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
	p       []byte
	k       int
	err     error
	partial bool // the write was short; finish it with a blocking write
	// werr is the request's failed write. The server may have answered
	// before reading the whole request (a 413 for a body over its limit)
	// and closed: its response is read first, and werr only stands in
	// for an end of the connection before any byte of it.
	werr  error
	wrote int // bytes of the request written
	fn    func(fd uintptr) bool
	wfn   func(fd uintptr) bool
}

func newFDReader(rc syscall.RawConn, n *measure.Bytes) *fdReader {
	r := &fdReader{rc: rc, n: n}
	r.fn, r.wfn = r.read, r.write
	return r
}

// sendWithNextRead queues req to be written by the next Read.
func (r *fdReader) sendWithNextRead(req []byte) { r.send, r.werr, r.wrote = req, nil, 0 }

func (r *fdReader) read(fd uintptr) bool {
	if r.send != nil {
		k, err := writeFD(fd, r.send)
		if k > 0 {
			r.n.Out.Add(int64(k))
			r.send, r.wrote = r.send[k:], r.wrote+k
		}
		switch {
		case err != nil && err != unix.EAGAIN:
			r.send, r.werr = nil, &wrappedErr{op: "write", err: err} // and read what came
		case len(r.send) > 0:
			r.partial = true
			return true
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
		r.err = &wrappedErr{op: "read", err: r.err}
	}
	return true
}

// write finishes a short write, waiting for the socket to drain.
func (r *fdReader) write(fd uintptr) bool {
	k, err := writeFD(fd, r.send)
	if k > 0 {
		r.n.Out.Add(int64(k))
		r.send, r.wrote = r.send[k:], r.wrote+k
	}
	if err == unix.EAGAIN {
		return false
	}
	if err != nil {
		r.send, r.werr = nil, &wrappedErr{op: "write", err: err}
		return true // Read reads what came
	}
	if len(r.send) > 0 {
		return false
	}
	// Written whole. The response may have come while the write blocked
	// (the server answered before reading the body): its readiness is
	// spent, so the next Read must try read(2) before it waits.
	r.send = nil
	return true
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
	for {
		if err := r.rc.Read(r.fn); err != nil {
			r.send = nil
			return 0, err // deadline, closed connection
		}
		if !r.partial {
			break
		}
		r.partial = false
		if err := r.rc.Write(r.wfn); err != nil {
			r.send = nil
			return 0, err
		}
	}
	switch {
	case r.werr != nil && r.got == 0 && (r.err != nil || r.k == 0):
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

// wrappedErr gives raw syscall errors the "op: errno" shape failReason
// prints for net errors.
type wrappedErr struct {
	op  string
	err error
}

func (e *wrappedErr) Error() string { return e.op + ": " + e.err.Error() }
func (e *wrappedErr) Unwrap() error { return e.err }

var errNoRawConn = errors.New("load: connection has no raw file descriptor")
