//go:build linux && (amd64 || arm64)

package link

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"testing"

	"github.com/wirebench/wirebench/internal/uring"
	"golang.org/x/sys/unix"
)

// TestRelayReadsThroughRing: where the kernel has io_uring's multishot
// read (Linux 6.7), the reader reads both devices through it and TCP
// crosses both ways; where the kernel refuses the read (an opcode it
// does not know), it reads with system calls and TCP crosses all the
// same.
func TestRelayReadsThroughRing(t *testing.T) {
	needRoot(t)
	echo := func(t *testing.T, l *Link) {
		addr := echoServer(t, "127.0.0.1")
		c := dialFar(t, l, "tcp", addr)
		msg := bytes.Repeat([]byte("ring "), 20000) // super-packets too
		go c.Write(msg)
		got := make([]byte, len(msg))
		if _, err := io.ReadFull(c, got); err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("echo: %d bytes, equal %v, %v", len(got), bytes.Equal(got, msg), err)
		}
	}
	t.Run("ring", func(t *testing.T) {
		var u unix.Utsname
		_ = unix.Uname(&u)
		var major, minor int
		fmt.Sscanf(unix.ByteSliceToString(u.Release[:]), "%d.%d", &major, &minor)
		if major < 6 || major == 6 && minor < 7 {
			t.Skipf("kernel %d.%d: no multishot read before 6.7", major, minor)
		}
		if err := ringAvailable(); err != nil {
			t.Skip(err)
		}
		l := openLink(t, "rtt=2ms")
		echo(t, l)
		if !l.rd.ringRead.Load() {
			t.Errorf("not read through io_uring")
		}
	})
	t.Run("refused", func(t *testing.T) {
		readOp = 255
		defer func() { readOp = uring.OpReadMultishot }()
		l := openLink(t, "rtt=2ms")
		echo(t, l)
		if l.rd.ringRead.Load() {
			t.Errorf("read through io_uring with an opcode no kernel has")
		}
		if st := l.Stats(); st.Reads == 0 {
			t.Errorf("no reads counted: %+v", st)
		}
	})
}

// ringAvailable is nil where this process may set up an io_uring.
func ringAvailable() error {
	ch := make(chan error)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		r, err := uring.New(2)
		if err == nil {
			r.Close()
		}
		ch <- err
	}()
	return <-ch
}
