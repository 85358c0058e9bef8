//go:build linux && (amd64 || arm64)

package uring

import (
	"bytes"
	"errors"
	"net"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func newRing(t *testing.T, entries uint32) *Ring {
	t.Helper()
	runtime.LockOSThread() // SINGLE_ISSUER: see New
	t.Cleanup(runtime.UnlockOSThread)
	r, err := New(entries)
	if errors.Is(err, ErrUnavailable) {
		t.Skipf("skipping: %v (kernel, /proc/sys/kernel/io_uring_disabled or seccomp)", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// take waits for and returns the ready completions.
func take(t *testing.T, r *Ring, wait uint32) []CQE {
	t.Helper()
	if err := r.Enter(wait, 2e9); err != nil {
		t.Fatal(err)
	}
	var got []CQE
	r.Completions(func(q *CQE) { got = append(got, *q) })
	return got
}

func TestNopRoundTrip(t *testing.T) {
	r := newRing(t, 4)
	for i := range 6 { // more than the SQ holds: the ring wraps
		s := r.SQE()
		if s == nil {
			t.Fatalf("SQE %d: queue full", i)
		}
		s.Opcode, s.UserData = OpNop, uint64(100+i)
		got := take(t, r, 1)
		if len(got) != 1 || got[0].UserData != uint64(100+i) || got[0].Res != 0 {
			t.Fatalf("round %d: completions %+v", i, got)
		}
	}
}

func TestSQEFull(t *testing.T) {
	r := newRing(t, 2)
	for i := range 2 {
		if r.SQE() == nil {
			t.Fatalf("a ring of 2 gave no SQE #%d", i+1)
		}
	}
	if r.SQE() != nil {
		t.Fatal("a third SQE from a full ring of 2")
	}
	if r.Pending() != 2 {
		t.Fatalf("pending %d, want 2", r.Pending())
	}
}

// socketPair is a loopback TCP connection; a is its raw descriptor
// (a dup, blocking mode cleared), b the peer.
func socketPair(t *testing.T) (int, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	f, err := c.(*net.TCPConn).File()
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close(); b.Close() })
	fd := int(f.Fd())
	unix.SetNonblock(fd, true)
	return fd, b
}

// A multishot receive into provided buffers delivers every byte in order
// across several completions and buffers, and a send whose success is
// skipped posts nothing.
func TestMultishotRecvAndSkippedSend(t *testing.T) {
	r := newRing(t, 8)
	if _, err := r.NewBufRing(1, 3, 64); err == nil {
		t.Fatal("a buffer ring of 3 entries was accepted")
	}
	br, err := r.NewBufRing(1, 4, 64)
	if err != nil {
		t.Fatal(err)
	}
	fd, peer := socketPair(t)
	s := r.SQE()
	s.Opcode, s.Fd, s.Ioprio, s.Flags, s.BufIndex, s.UserData = OpRecv, int32(fd), RecvMultishot, SqeBufferSelect, 1, 7
	if err := r.Enter(0, 0); err != nil {
		t.Fatal(err)
	}
	want := bytes.Repeat([]byte("0123456789abcdef"), 10) // 160 bytes: three buffers
	if _, err := peer.Write(want); err != nil {
		t.Fatal(err)
	}
	var got []byte
	for turns := 0; len(got) < len(want); turns++ {
		if turns > 10 {
			t.Fatalf("after %d turns: %d of %d bytes", turns, len(got), len(want))
		}
		for _, q := range take(t, r, 1) {
			if q.UserData != 7 || q.Res <= 0 || q.Flags&CQEFBuffer == 0 || q.Flags&CQEFMore == 0 {
				t.Fatalf("completion %+v", q)
			}
			bid := uint16(q.Flags >> 16)
			got = append(got, br.Buf(bid, int(q.Res))...)
			br.Give(bid)
		}
		br.Publish()
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("received %q, want %q", got, want)
	}

	msg := []byte("GET / HTTP/1.1\r\n\r\n")
	s = r.SQE()
	s.Opcode, s.Fd, s.Flags, s.UserData = OpSend, int32(fd), SqeCQESkipSucces, 9
	s.Addr, s.Len, s.OpFlags = uint64(uintptr(unsafe.Pointer(&msg[0]))), uint32(len(msg)), unix.MSG_WAITALL|unix.MSG_NOSIGNAL
	s = r.SQE()
	s.Opcode, s.UserData = OpNop, 10 // a completion to wait for
	if got := take(t, r, 1); len(got) != 1 || got[0].UserData != 10 {
		t.Fatalf("completions after a skipped send and a nop: %+v", got)
	}
	buf := make([]byte, 64)
	n, err := peer.Read(buf)
	if err != nil || string(buf[:n]) != string(msg) {
		t.Fatalf("peer read %q, %v; want %q", buf[:n], err, msg)
	}
}

// A minimum wait makes a wait for two completions return with the one
// that is there; without the kernel feature it is refused, not ignored.
func TestMinWait(t *testing.T) {
	r := newRing(t, 4)
	if err := r.SetMinWait(50); errors.Is(err, ErrUnavailable) {
		t.Skipf("skipping: %v", err)
	} else if err != nil {
		t.Fatal(err)
	}
	s := r.SQE()
	s.Opcode, s.UserData = OpNop, 1
	start := time.Now()
	if err := r.Enter(2, 20e9); err != nil {
		t.Fatal(err)
	}
	// Generous: without the minimum wait this returns after 20 s.
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("a wait for 2 with 1 ready and a 50 µs minimum took %v", d)
	}
	if n := r.Completions(func(*CQE) {}); n != 1 {
		t.Fatalf("%d completions, want 1", n)
	}
	r.features &^= featMinTimeout
	if err := r.SetMinWait(20); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("SetMinWait on a kernel without it: %v, want ErrUnavailable", err)
	}
	if err := r.SetMinWait(0); err != nil {
		t.Fatalf("SetMinWait(0): %v", err)
	}
}

// NewShared's ring takes submissions from threads other than the one
// that made it (New's refuses them: SINGLE_ISSUER), signals its eventfd
// on a completion a worker thread posts; both rings' descriptors are
// closed on exec (the kernel's doing: there is no flag to ask for it).
func TestSharedRingAnyThread(t *testing.T) {
	made := make(chan *Ring)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		r, err := NewShared(2)
		if errors.Is(err, ErrUnavailable) {
			t.Log(err)
		} else if err != nil {
			t.Error(err)
		}
		made <- r
	}()
	r := <-made
	if r == nil {
		t.Skip("skipping: no io_uring")
	}
	defer r.Close()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(efd)
	if err := r.RegisterEventfd(efd); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		s := r.SQE()
		s.Opcode, s.Flags, s.UserData = OpNop, SqeAsync, uint64(40+i)
		if n, err := r.Submit(); n != 1 || err != nil {
			t.Fatalf("submit %d from another thread: %d, %v", i, n, err)
		}
		var buf [8]byte
		if _, err := unix.Read(efd, buf[:]); err != nil { // blocks until a completion
			t.Fatal(err)
		}
		var got []CQE
		r.Completions(func(q *CQE) { got = append(got, *q) })
		if len(got) != 1 || got[0].UserData != uint64(40+i) || got[0].Res != 0 {
			t.Fatalf("round %d: completions %+v", i, got)
		}
	}
	owned := newRing(t, 2)
	for _, x := range []*Ring{r, owned} {
		fl, err := unix.FcntlInt(uintptr(x.fd), unix.F_GETFD, 0)
		if err != nil || fl&unix.FD_CLOEXEC == 0 {
			t.Fatalf("ring descriptor flags %#x, %v: not closed on exec", fl, err)
		}
	}
}

// TestMultishotReadIntoCallerBuffers: a multishot read on a pipe fills
// the caller's buffers (NewBufSlots, GiveBuf), a completion each naming
// the slot, waited for with EnterBlocking; a buffer given back serves
// again; OpAsyncCancel ends the read with a last completion (no MORE).
func TestMultishotReadIntoCallerBuffers(t *testing.T) {
	r := newRing(t, 4)
	p, slots, bufs := multishotPipe(t, r, 3)
	seen := map[uint16]bool{}
	for i, msg := range []string{"first", "second", "third"} {
		if _, err := unix.Write(p[1], []byte(msg)); err != nil {
			t.Fatal(err)
		}
		if err := r.EnterBlocking(1, 2e9); err != nil {
			t.Fatal(err)
		}
		var got []CQE
		r.Completions(func(c *CQE) { got = append(got, *c) })
		if len(got) == 1 && got[0].Res == -int32(unix.EINVAL) {
			t.Skip("no multishot read before Linux 6.7")
		}
		if len(got) != 1 || got[0].UserData != 7 || got[0].Res != int32(len(msg)) || got[0].Flags&CQEFBuffer == 0 || got[0].Flags&CQEFMore == 0 {
			t.Fatalf("read %d: completions %+v", i, got)
		}
		bid := uint16(got[0].Flags >> 16)
		if bid > 1 || string(bufs[bid][:len(msg)]) != msg {
			t.Fatalf("read %d: slot %d holds %q, want %q", i, bid, bufs[bid][:len(msg)], msg)
		}
		seen[bid] = true
		slots.GiveBuf(bid, bufs[bid])
		slots.Publish()
	}
	if len(seen) != 2 {
		t.Errorf("slots used %v: want both", seen)
	}
	c := r.SQE()
	c.Opcode, c.Addr, c.UserData = OpAsyncCancel, 7, 8
	ended := false
	for try := 0; !ended && try < 5; try++ {
		if err := r.EnterBlocking(1, 2e9); err != nil {
			t.Fatal(err)
		}
		r.Completions(func(c *CQE) {
			if c.UserData == 7 && c.Flags&CQEFMore == 0 {
				ended = true
			}
		})
	}
	if !ended {
		t.Error("the cancelled read posted no last completion")
	}
}

// TestPollRunsDeferredWork: a multishot read's read, once its file has
// data, waits for the ring's owner (DEFER_TASKRUN); Poll runs it without
// waiting and reports the completion, and reports none before the data.
func TestPollRunsDeferredWork(t *testing.T) {
	r := newRing(t, 4)
	p, slots, bufs := multishotPipe(t, r, 1)
	for i := range 3 {
		if r.Poll() {
			t.Fatalf("round %d: a completion before any data", i)
		}
		// From another thread: the ring's own would run the work on its
		// way out of the write.
		werr := make(chan error)
		go func() { _, err := unix.Write(p[1], []byte("x")); werr <- err }()
		if err := <-werr; err != nil {
			t.Fatal(err)
		}
		if !r.Poll() {
			t.Fatalf("round %d: Poll saw no completion after the write", i)
		}
		n := 0
		r.Completions(func(c *CQE) {
			if c.Res == -int32(unix.EINVAL) {
				t.Skip("no multishot read before Linux 6.7")
			}
			if c.Res != 1 || c.UserData != 7 {
				t.Fatalf("round %d: completion %+v", i, *c)
			}
			n++
			slots.GiveBuf(uint16(c.Flags>>16), bufs[c.Flags>>16])
		})
		slots.Publish()
		if n != 1 {
			t.Fatalf("round %d: %d completions", i, n)
		}
	}
}

// multishotPipe opens a pipe whose read end has a multishot read
// (user data 7) submitted on r, into buffer group group holding two
// 64-byte buffers (slots 0 and 1); the pipe is closed at the test's end.
func multishotPipe(t *testing.T, r *Ring, group uint16) (p [2]int, slots *BufRing, bufs [][]byte) {
	t.Helper()
	if err := unix.Pipe2(p[:], unix.O_NONBLOCK|unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(p[0]); unix.Close(p[1]) })
	slots, err := r.NewBufSlots(group, 2)
	if err != nil {
		t.Fatal(err)
	}
	bufs = [][]byte{make([]byte, 64), make([]byte, 64)}
	for i, b := range bufs {
		slots.GiveBuf(uint16(i), b)
	}
	slots.Publish()
	q := r.SQE()
	q.Opcode, q.Fd, q.Flags, q.BufIndex, q.UserData = OpReadMultishot, int32(p[0]), SqeBufferSelect, group, 7
	if err := r.Enter(0, 0); err != nil {
		t.Fatal(err)
	}
	return p, slots, bufs
}
