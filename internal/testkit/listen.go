package testkit

import (
	"net"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// Listen returns a TCP listener already bound on 127.0.0.1 at a port the
// kernel chose, closed when the test ends. Hand it to the server itself
// (http.Server.Serve, ListenerFile for a child): never close it and pass
// the port on, someone else may bind it in between.
func Listen(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testkit: listen: %v", err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// ListenerFile returns a duplicate of a TCP listener's socket as a file,
// for a child's exec.Cmd.ExtraFiles (the child's fd 3 is ExtraFiles[0]).
// The duplicate is closed when the test ends; the child keeps its own.
func ListenerFile(t testing.TB, ln net.Listener) *os.File {
	t.Helper()
	tl, ok := ln.(*net.TCPListener)
	if !ok {
		t.Fatalf("testkit: %T is not a TCP listener", ln)
	}
	f, err := tl.File()
	if err != nil {
		t.Fatalf("testkit: listener file: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// RefusedAddr returns a loopback address whose connections are refused:
// a port bound (without SO_REUSEADDR, so nobody else can bind it) but not
// listening, held until the test ends. Closing a listener and reusing its
// port instead races with every other test that listens.
func RefusedAddr(t testing.TB) string {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("testkit: socket: %v", err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatalf("testkit: bind: %v", err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatalf("testkit: getsockname: %v", err)
	}
	return (&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: sa.(*unix.SockaddrInet4).Port}).String()
}
