package rawio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wirebench/wirebench/measure"
)

// pair is a wrapped server-side connection and its plain client.
func pair(t *testing.T) (*Conn, *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	wl := Listener(ln)
	type accepted struct {
		c   net.Conn
		err error
	}
	ch := make(chan accepted, 1)
	go func() { c, err := wl.Accept(); ch <- accepted{c, err} }()
	cc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	a := <-ch
	if a.err != nil {
		t.Fatal(a.err)
	}
	rc, ok := a.c.(*Conn)
	if !ok {
		t.Fatalf("Listener accepted a %T, want *Conn", a.c)
	}
	t.Cleanup(func() { rc.Close(); cc.Close() })
	return rc, cc.(*net.TCPConn)
}

// TestReadWrite: bytes go both ways intact, a read returns what has
// arrived, and the peer's close is io.EOF.
func TestReadWrite(t *testing.T) {
	c, peer := pair(t)
	if n, err := c.Write([]byte("hello")); n != 5 || err != nil {
		t.Fatalf("Write: %d, %v", n, err)
	}
	buf := make([]byte, 16)
	if _, err := io.ReadFull(peer, buf[:5]); err != nil || string(buf[:5]) != "hello" {
		t.Fatalf("peer read %q, %v", buf[:5], err)
	}
	if n, err := c.Read(nil); n != 0 || err != nil {
		t.Fatalf("Read(nil): %d, %v", n, err)
	}
	go peer.Write([]byte("world"))
	n, err := c.Read(buf) // blocks in the poller until the bytes arrive
	if err != nil || string(buf[:n]) != "world" {
		t.Fatalf("Read: %q, %v", buf[:n], err)
	}
	peer.CloseWrite()
	if n, err := c.Read(buf); n != 0 || err != io.EOF {
		t.Fatalf("after the peer's close: %d, %v, want 0, EOF", n, err)
	}
}

// TestLargeWrite: a write larger than the socket buffers completes once
// the peer reads (the EAGAIN path waits in the poller), and all of it
// arrives in order.
func TestLargeWrite(t *testing.T) {
	c, peer := pair(t)
	// 32 MiB: more than loopback's socket buffers hold, so the write
	// meets EAGAIN while the peer sleeps.
	want := bytes.Repeat([]byte("0123456789abcdef"), 1<<21)
	got := make(chan []byte)
	go func() {
		time.Sleep(50 * time.Millisecond) // the writer fills the buffers first
		b, _ := io.ReadAll(io.LimitReader(peer, int64(len(want))))
		got <- b
	}()
	if n, err := c.Write(want); n != len(want) || err != nil {
		t.Fatalf("Write: %d of %d, %v", n, len(want), err)
	}
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("peer got %d bytes, not the %d written", len(b), len(want))
	}
}

// TestErrors: errors have net.Conn's shape, *net.OpError with Op "read"
// or "write", so that callers classifying them (net/http, our load
// client) see what a *net.TCPConn would give.
func TestErrors(t *testing.T) {
	c, peer := pair(t)

	c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err := c.Read(make([]byte, 8))
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "read" || !oe.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %#v, want a timeout *net.OpError with Op read", err)
	}
	if oe.Source == nil || oe.Addr == nil || oe.Source.String() != c.LocalAddr().String() || oe.Addr.String() != c.RemoteAddr().String() {
		t.Errorf("deadline error addresses %v -> %v, want %v -> %v", oe.Source, oe.Addr, c.LocalAddr(), c.RemoteAddr())
	}
	c.SetReadDeadline(time.Time{})

	// The peer resets: reads and then writes fail with the errno inside.
	peer.SetLinger(0)
	peer.Close()
	time.Sleep(20 * time.Millisecond)
	_, err = c.Read(make([]byte, 8))
	if !errors.As(err, &oe) || oe.Op != "read" || !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("read after a reset: %v, want a read *net.OpError with ECONNRESET", err)
	}
	var se *os.SyscallError
	if !errors.As(err, &se) || se.Syscall != "read" {
		t.Errorf("read after a reset: %v, want an *os.SyscallError inside as net's", err)
	}
	_, err = c.Write([]byte("x"))
	if !errors.As(err, &oe) || oe.Op != "write" || !(errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)) {
		t.Fatalf("write after a reset: %v, want a write *net.OpError with EPIPE or ECONNRESET", err)
	}

	c.Close()
	if _, err := c.Read(make([]byte, 8)); !errors.Is(err, net.ErrClosed) || !errors.As(err, &oe) || oe.Op != "read" {
		t.Fatalf("read after Close: %v, want net.ErrClosed in a read *net.OpError", err)
	}
	if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) || !errors.As(err, &oe) || oe.Op != "write" {
		t.Fatalf("write after Close: %v, want net.ErrClosed in a write *net.OpError", err)
	}
}

// TestCloseUnblocks: Close wakes a Read blocked in the poller, as on
// *net.TCPConn (servers shut down this way).
func TestCloseUnblocks(t *testing.T) {
	c, _ := pair(t)
	done := make(chan error)
	go func() { _, err := c.Read(make([]byte, 8)); done <- err }()
	time.Sleep(20 * time.Millisecond)
	c.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("blocked read after Close: %v, want net.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not wake the blocked read")
	}
}

// TestConcurrent: Reads and Writes from several goroutines at once (as
// net.Conn allows) lose nothing; run with -race.
func TestConcurrent(t *testing.T) {
	c, peer := pair(t)
	const writers, each = 4, 500
	msg := []byte("0123456789")
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range each {
				if _, err := c.Write(msg); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	echoed := make(chan int)
	go func() { // the peer sends back what it gets
		n, _ := io.Copy(peer, io.LimitReader(peer, writers*each*int64(len(msg))))
		echoed <- int(n)
	}()
	var mu sync.Mutex
	total := 0
	var rg sync.WaitGroup
	for range 2 {
		rg.Go(func() {
			buf := make([]byte, 64)
			for {
				c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
				n, err := c.Read(buf)
				mu.Lock()
				total += n
				mu.Unlock()
				if err != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	want := writers * each * len(msg)
	if n := <-echoed; n != want {
		t.Fatalf("peer got %d bytes, want %d", n, want)
	}
	rg.Wait()
	if total != want {
		t.Fatalf("read back %d bytes, want %d", total, want)
	}
}

// TestWrapOther: a connection that is not TCP is returned as it is.
func TestWrapOther(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	w, err := Wrap(a)
	if err != nil || w != a {
		t.Fatalf("Wrap(pipe) = %T, %v; want the pipe itself", w, err)
	}
}

// TestSyscalls: Read and Write return what read(2) and write(2) did, and
// on an error 0 bytes (never -1: callers pass the count on as io.Reader's)
// with the errno, the common ones as the shared values.
func TestSyscalls(t *testing.T) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fds[0])
	if n, err := Read(fds[0], make([]byte, 4)); n != 0 || err != syscall.EAGAIN {
		t.Fatalf("Read with nothing sent: %d, %v; want 0, EAGAIN", n, err)
	}
	if n, err := Write(fds[1], []byte("abc")); n != 3 || err != nil {
		t.Fatalf("Write: %d, %v", n, err)
	}
	buf := make([]byte, 4)
	if n, err := Read(fds[0], buf); n != 3 || err != nil || string(buf[:3]) != "abc" {
		t.Fatalf("Read: %d %q, %v", n, buf[:n], err)
	}
	if n, err := Read(fds[0], nil); n != 0 || err != nil {
		t.Fatalf("Read(nil): %d, %v", n, err)
	}
	if n, err := Write(fds[1], nil); n != 0 || err != nil {
		t.Fatalf("Write(nil): %d, %v", n, err)
	}
	syscall.Close(fds[1])
	if n, err := Read(fds[1], buf); n != 0 || err != syscall.EBADF {
		t.Fatalf("Read on a closed descriptor: %d, %v; want 0, EBADF", n, err)
	}
	if n, err := Write(fds[1], buf); n != 0 || err != syscall.EBADF {
		t.Fatalf("Write on a closed descriptor: %d, %v; want 0, EBADF", n, err)
	}
	if Errno(syscall.EINTR) != syscall.EINTR || Errno(syscall.EPIPE) != syscall.EPIPE {
		t.Fatal("Errno changed an errno")
	}
}

// TestQueue: queued bytes are written by the next Read before it waits
// (the peer answers what it received), by a Write before its own bytes,
// or by Flush; the counters see every byte once.
func TestQueue(t *testing.T) {
	c, peer := pair(t)
	var n measure.Bytes
	c.Count(&n)
	go func() { // echo each 4-byte request as its reply
		buf := make([]byte, 4)
		for {
			if _, err := io.ReadFull(peer, buf); err != nil {
				return
			}
			peer.Write(bytes.ToUpper(buf))
		}
	}()
	buf := make([]byte, 16)
	for i, wait := range []bool{true, false} {
		c.Queue([]byte("req"), wait)
		c.Queue([]byte{byte('0' + i)}, wait) // appended to the first
		k, err := io.ReadFull(c, buf[:4])
		if err != nil || string(buf[:k]) != fmt.Sprintf("REQ%d", i) {
			t.Fatalf("waitFirst=%v: read %q, %v", wait, buf[:k], err)
		}
		if st := c.Stats(); wait && st != (Stats{Reads: 1, Writes: 1}) {
			t.Errorf("waitFirst: system calls %+v, want one write and one read that found the reply", st)
		}
	}
	c.Queue([]byte("ab"), true)
	if k, err := c.Write([]byte("cd")); k != 2 || err != nil {
		t.Fatalf("Write after Queue: %d, %v", k, err)
	}
	if _, err := io.ReadFull(c, buf[:4]); err != nil || string(buf[:4]) != "ABCD" {
		t.Fatalf("Write after Queue: the peer answered %q, %v; want the queue first", buf[:4], err)
	}
	c.Queue([]byte("wxyz"), false)
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(); err != nil { // nothing left: writes nothing
		t.Fatal(err)
	}
	if _, err := io.ReadFull(c, buf[:4]); err != nil || string(buf[:4]) != "WXYZ" {
		t.Fatalf("after Flush: %q, %v", buf[:4], err)
	}
	if n.Out.Load() != 16 || n.In.Load() != 16 {
		t.Errorf("counted %d out, %d in; want 16 and 16", n.Out.Load(), n.In.Load())
	}
}

// TestQueueWaitFirst: with waitFirst the Read that writes the queue waits
// for the next arrival before it reads, so bytes already in the socket
// stay there until then; without it, they are read at once.
func TestQueueWaitFirst(t *testing.T) {
	c, peer := pair(t)
	peer.Write([]byte("early"))
	time.Sleep(50 * time.Millisecond) // arrived, and seen by the poller
	buf := make([]byte, 1)
	if k, err := c.Read(buf); k != 1 || err != nil { // leaves "arly" unread
		t.Fatalf("first read: %d, %v", k, err)
	}
	c.Queue([]byte("q1"), true)
	c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if k, err := c.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("waitFirst read: %d %q, %v; want it to wait for new bytes until the deadline", k, buf[:k], err)
	}
	c.SetReadDeadline(time.Time{})
	c.Queue([]byte("q2"), false)
	if k, err := c.Read(buf); k != 1 || err != nil || buf[0] != 'a' {
		t.Fatalf("read without waitFirst: %d %q, %v; want the unread byte at once", k, buf[:k], err)
	}
	got := make([]byte, 4)
	if _, err := io.ReadFull(peer, got); err != nil || string(got) != "q1q2" {
		t.Fatalf("the peer received %q, %v; want both queues", got, err)
	}
}

// TestQueueLarge: a queue larger than the socket buffers is finished by a
// blocking write inside Read, and the reply after it is read.
func TestQueueLarge(t *testing.T) {
	c, peer := pair(t)
	want := bytes.Repeat([]byte("0123456789abcdef"), 1<<21) // 32 MiB
	c.Queue(want, true)
	got := make(chan []byte)
	go func() {
		time.Sleep(50 * time.Millisecond) // the socket fills first
		b, _ := io.ReadAll(io.LimitReader(peer, int64(len(want))))
		peer.Write([]byte("done"))
		got <- b
	}()
	buf := make([]byte, 4)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "done" {
		t.Fatalf("reply after a large queue: %q, %v", buf, err)
	}
	if !bytes.Equal(<-got, want) {
		t.Fatal("the peer received other bytes than queued")
	}
}

// TestQueueWriteError: a failed write of the queue inside Read is a
// write error.
func TestQueueWriteError(t *testing.T) {
	c, peer := pair(t)
	peer.SetLinger(0)
	peer.Close()
	time.Sleep(20 * time.Millisecond)
	c.Queue([]byte("x"), true)
	_, err := c.Read(make([]byte, 4))
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "write" || !(errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)) {
		t.Fatalf("Read with a queue to a reset peer: %v, want an EPIPE or ECONNRESET *net.OpError", err)
	}
}

// Send and Recv answer as Write and Read on a non-blocking socket: the
// bytes, 0 for an empty slice, EAGAIN when there is nothing, 0 at EOF,
// EPIPE once the peer is gone (MSG_NOSIGNAL: no SIGPIPE first).
func TestSendRecv(t *testing.T) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, b := fds[0], fds[1]
	defer syscall.Close(a)
	buf := make([]byte, 16)
	if n, err := Recv(a, buf); n != 0 || err != syscall.EAGAIN {
		t.Fatalf("Recv on an empty socket: %d, %v; want 0, EAGAIN", n, err)
	}
	if n, err := Send(b, nil); n != 0 || err != nil {
		t.Fatalf("Send(nil): %d, %v", n, err)
	}
	if n, err := Send(b, []byte("hello")); n != 5 || err != nil {
		t.Fatalf("Send: %d, %v", n, err)
	}
	if n, err := Recv(a, buf); n != 5 || err != nil || string(buf[:n]) != "hello" {
		t.Fatalf("Recv: %d, %v, %q", n, err, buf[:n])
	}
	if n, err := Recv(a, nil); n != 0 || err != nil {
		t.Fatalf("Recv(nil): %d, %v", n, err)
	}
	syscall.Close(b)
	if n, err := Recv(a, buf); n != 0 || err != nil {
		t.Fatalf("Recv at EOF: %d, %v; want 0, nil", n, err)
	}
	if n, err := Send(a, []byte("x")); n != 0 || err != syscall.EPIPE {
		t.Fatalf("Send to a closed peer: %d, %v; want 0, EPIPE", n, err)
	}
}
