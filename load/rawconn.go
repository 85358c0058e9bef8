package load

import (
	"context"
	"io"
	"net"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/wirebench/wirebench/measure"
)

// rawIOConn is a TCP connection whose reads and writes are raw system calls
// made through its syscall.RawConn, for the lean gRPC client: the reason
// readNB gives (the runtime is not told of a call that cannot block, so
// sysmon is neither woken from its idle sleep by every call nor handed the
// P after 20 µs of a loopback write) applied to an HTTP/2 connection.
// Blocking stays with Go's poller, so deadlines and Close work as for any
// net.Conn. The REST clients have done this since fdReader; without it a
// gRPC call at c=1 paid a futex wake of sysmon and its thread's nanosleeps
// on the client's CPU (strace: 0.6 futex and 0.7 nanosleep per call, none
// for REST), which p50 counted against gRPC (issue 17).
//
// One Read and one Write may run at once (the lean session reads under its
// token, writes under wmu); two concurrent Reads or Writes may not.
type rawIOConn struct {
	*net.TCPConn
	rc   syscall.RawConn
	r, w rawOp
}

// rawOp is the state of a Read or Write in progress, kept here so that
// its function, bound once, allocates nothing per call.
type rawOp struct {
	p   []byte
	k   int
	err error
	fn  func(fd uintptr) bool
}

// rawIODialer makes dial's TCP connections rawIOConns; others pass as
// they are.
func rawIODialer(dial measure.DialFunc) measure.DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		tc, ok := c.(*net.TCPConn)
		if !ok {
			return c, nil
		}
		rc, err := tc.SyscallConn()
		if err != nil {
			tc.Close()
			return nil, err
		}
		rio := &rawIOConn{TCPConn: tc, rc: rc}
		rio.r.fn, rio.w.fn = rio.read, rio.write
		return rio, nil
	}
}

func (c *rawIOConn) read(fd uintptr) bool {
	op := &c.r
	for {
		op.k, op.err = readNB(int(fd), op.p)
		if op.err != unix.EINTR {
			break
		}
	}
	if op.err == unix.EAGAIN {
		return false // wait for the poller
	}
	if op.err != nil {
		op.k, op.err = 0, &wrappedErr{op: "read", err: op.err}
	}
	return true
}

func (c *rawIOConn) write(fd uintptr) bool {
	op := &c.w
	for op.k < len(op.p) {
		k, err := writeFD(fd, op.p[op.k:])
		op.k += k
		if err == unix.EAGAIN {
			return false // the send buffer is full: wait for room
		}
		if err != nil {
			op.err = &wrappedErr{op: "write", err: err}
			return true
		}
	}
	return true
}

// Read implements io.Reader.
func (c *rawIOConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	op := &c.r
	op.p, op.k, op.err = p, 0, nil
	defer func() { op.p = nil }()
	if err := c.rc.Read(op.fn); err != nil {
		return 0, err // deadline, closed connection
	}
	if op.err == nil && op.k == 0 {
		return 0, io.EOF
	}
	return op.k, op.err
}

// Write implements io.Writer: all of p, or an error.
func (c *rawIOConn) Write(p []byte) (int, error) {
	op := &c.w
	op.p, op.k, op.err = p, 0, nil
	defer func() { op.p = nil }()
	if err := c.rc.Write(op.fn); err != nil {
		return op.k, err
	}
	return op.k, op.err
}
