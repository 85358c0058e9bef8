package idleread

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// pair is a loopback TCP connection: the server's end and the client's.
func pair(t *testing.T) (srv, cli net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cli, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	srv, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(); cli.Close() })
	return srv, cli
}

// A client that sends its next request only after the reply, as at c=1:
// every read after a yield waits, so the Reader backs off to one yield in
// 2^maxShift reads, and every read still returns the request's bytes.
func TestBacksOffWhenYieldingDoesNotPay(t *testing.T) {
	srv, cli := pair(t)
	var r Reader
	r.Init(srv)
	const n = 300
	go func() {
		buf := make([]byte, 1)
		for i := range n {
			if _, err := cli.Write([]byte{byte(i)}); err != nil {
				return
			}
			if _, err := io.ReadFull(cli, buf); err != nil {
				return
			}
			time.Sleep(50 * time.Microsecond) // the client's think time: the read after the yield waits
		}
	}()
	buf := make([]byte, 16)
	for i := range n {
		k, err := r.Read(buf)
		if err != nil || k != 1 || buf[0] != byte(i) {
			t.Fatalf("read %d: %d bytes %v, err %v", i, k, buf[:k], err)
		}
		if _, err := srv.Write(buf[:1]); err != nil {
			t.Fatal(err)
		}
	}
	yields, waits := r.Stats()
	// Backing off: 1 try, then 1, 3, 7, ... 63 skipped reads between tries.
	if yields > n/16 || yields < 5 {
		t.Errorf("%d yields in %d reads that all waited: want a few (backoff to 1 in %d)", yields, n, 1<<maxShift)
	}
	if waits < yields*9/10 {
		t.Errorf("%d of %d yields found the request there; the client never sent before the reply", yields-waits, yields)
	}
}

// Requests already there when the read comes (a busy server, or a
// pipelining client): every read yields and none waits.
func TestKeepsYieldingWhenItPays(t *testing.T) {
	srv, cli := pair(t)
	var r Reader
	r.Init(srv)
	const n = 200
	if _, err := cli.Write(make([]byte, n)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	buf := make([]byte, 1)
	for i := range n {
		if k, err := r.Read(buf); k != 1 || err != nil {
			t.Fatalf("read %d: %d bytes, %v", i, k, err)
		}
	}
	if yields, waits := r.Stats(); yields != n || waits != 0 {
		t.Errorf("yields %d, waits %d; want %d and 0", yields, waits, n)
	}
}

// The errors are net.Conn's: end of stream, a deadline, a closed
// connection.
func TestErrorsAreNetConns(t *testing.T) {
	srv, cli := pair(t)
	var r Reader
	r.Init(srv)
	buf := make([]byte, 8)

	srv.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err := r.Read(buf)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("past the deadline: %v, want a net.Error timeout", err)
	}
	srv.SetReadDeadline(time.Time{})

	cli.Write([]byte("x"))
	if k, err := r.Read(buf); k != 1 || err != nil {
		t.Fatalf("after the deadline was cleared: %d, %v", k, err)
	}
	cli.Close()
	for range 2 * (1 << maxShift) { // through the backoff's plain reads too
		if _, err = r.Read(buf); err != io.EOF {
			t.Fatalf("after the client closed: %v, want io.EOF", err)
		}
	}
	srv.Close()
	if _, err = r.Read(buf); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("on a closed connection: %v, want net.ErrClosed", err)
	}
}

// A connection that is not a socket reads plainly; the zero Reader fails
// instead of panicking.
func TestNotASocket(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	var r Reader
	r.Init(a)
	go b.Write([]byte("hi"))
	buf := make([]byte, 4)
	if k, err := r.Read(buf); k != 2 || err != nil {
		t.Fatalf("pipe: %d, %v", k, err)
	}
	if y, _ := r.Stats(); y != 0 {
		t.Errorf("%d yields on a pipe", y)
	}
	var zero Reader
	if _, err := zero.Read(buf); err == nil {
		t.Error("the zero Reader read without a connection")
	}
}

// A read after a yield allocates nothing: it is made once per request.
func TestReadAllocatesNothing(t *testing.T) {
	srv, cli := pair(t)
	var r Reader
	r.Init(srv)
	if _, err := cli.Write(make([]byte, 10000)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	buf := make([]byte, 1)
	if a := testing.AllocsPerRun(1000, func() { r.Read(buf) }); a != 0 {
		t.Errorf("%v allocations per read", a)
	}
	if y, w := r.Stats(); y < 1000 || w != 0 {
		t.Errorf("yields %d, waits %d: the reads were not the yielding kind", y, w)
	}
}
