package link

import (
	"net"
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
