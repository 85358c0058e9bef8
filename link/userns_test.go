package link

import (
	"net"
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestHostSocketLoopbackOnly: the process outside dials the host's
// loopback for the one inside the namespaces, and nothing else: the link
// stays sealed unprivileged too.
func TestHostSocketLoopbackOnly(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	fd, err := hostSocket("tcp " + ln.Addr().String())
	if err != nil {
		t.Fatalf("a server on the loopback: %v", err)
	}
	unix.Close(fd)
	for _, req := range []string{"tcp 192.0.2.1:80", "udp 169.254.1.1:53", "tcp [::1]:80", "tcp 127.0.0.1", "tcp localhost:80"} {
		if fd, err := hostSocket(req); err == nil {
			unix.Close(fd)
			t.Errorf("%q: dialled; want refused", req)
		}
	}
}

// TestProxyUDPBuffers: unprivileged, each UDP datagram crosses two more
// sockets, the proxy's on the near side and the one dialled on the host;
// one whose buffer is full drops a datagram uncounted, beyond the link's
// loss (254 in a row at 20k datagrams/s on a busy VM with the default
// 208 KiB). Both ask for proxyUDPBuffer, as far as net.core.rmem_max grants.
func TestProxyUDPBuffers(t *testing.T) {
	want := proxyUDPBuffer
	if b, err := os.ReadFile("/proc/sys/net/core/rmem_max"); err == nil {
		if m, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && m < want {
			want = m
		}
	}
	want *= 2 // the kernel doubles what it grants, for its bookkeeping
	rcvbuf := func(name string, fd int) {
		t.Helper()
		got, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF)
		if err != nil {
			t.Fatal(err)
		}
		if got < want {
			t.Errorf("%s: SO_RCVBUF %d, want at least %d", name, got, want)
		}
	}
	srv, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	fd, err := hostSocket("udp " + srv.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	rcvbuf("the host's socket", fd)
	uc, err := listenProxyUDP(0)
	if err != nil {
		t.Fatal(err)
	}
	defer uc.Close()
	rc, err := uc.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	rc.Control(func(fd uintptr) { rcvbuf("the near side's socket", int(fd)) })
}
