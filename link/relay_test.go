package link

import (
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// needRoot skips a test of the relay without root; CI runs as root.
func isRoot() bool { return os.Geteuid() == 0 }

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the relay needs root (network namespaces, TUN devices): run the tests as root, as CI does")
	}
}

// openLink opens the link of spec for the test, closed at cleanup.
func openLink(t *testing.T, spec string) *Link {
	t.Helper()
	needRoot(t)
	s, err := Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	if s == nil {
		s = &Spec{}
	}
	l, err := Open(*s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// dialFar dials addr from the far side of the link.
func dialFar(t *testing.T, l *Link, network, addr string) net.Conn {
	t.Helper()
	var c net.Conn
	err := l.Do(func() (err error) {
		c, err = net.DialTimeout(network, addr, 10*time.Second)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestRelayTCP: a client on the far side reaches a server on the near
// side's 127.0.0.1 as written, and at its near address, over the link.
func TestRelayTCP(t *testing.T) {
	l := openLink(t, "rtt=20ms")
	for _, host := range []string{"127.0.0.1", l.Near.String()} {
		addr := echoServer(t, host)
		c := dialFar(t, l, "tcp", addr)
		msg := []byte("hello over the link")
		start := time.Now()
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(msg))
		if _, err := io.ReadFull(c, got); err != nil || string(got) != string(msg) {
			t.Fatalf("%s: echo %q, %v", addr, got, err)
		}
		if rtt := time.Since(start); rtt < 20*time.Millisecond {
			t.Errorf("%s: echo in %v, shorter than the link's 20 ms RTT: not through the link", addr, rtt)
		}
	}
	st := l.Stats()
	if st.Up.Delivered == 0 || st.Down.Delivered == 0 {
		t.Errorf("stats %+v: nothing went through the pipes", st)
	}
}

// echoServer listens on host:0 on the near side (this test's namespace)
// and echoes; it returns the address.
func echoServer(t *testing.T, host string) string {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	return ln.Addr().String()
}
