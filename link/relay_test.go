package link

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"net"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
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

// TestRelaySegments: super-packets cross the link segment by segment.
// TCP both ways over a lossy, rate-limited link delivers every byte in
// order (runs of segments cut out of super-packets and written back);
// UDP datagrams sent 32 at a time with UDP_SEGMENT, as quic-go sends,
// arrive intact, each lost or not on its own, exactly those the link
// lost missing; and the TUN devices refuse no write.
func TestRelaySegments(t *testing.T) {
	l := openLink(t, "rtt=2ms,rate=100mbit,loss=2%")
	addr := echoServer(t, "127.0.0.1")
	c := dialFar(t, l, "tcp", addr)
	data := make([]byte, 3<<20)
	for i := range data {
		data[i] = byte(i*131 + i>>12)
	}
	go func() { _, _ = c.Write(data) }()
	back := make([]byte, len(data))
	_ = c.SetReadDeadline(time.Now().Add(60 * time.Second))
	if _, err := io.ReadFull(c, back); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back, data) {
		t.Fatal("the echo differs from what was sent")
	}
	st := l.Stats()
	if st.Up.Lost == 0 || st.Down.Lost == 0 {
		t.Errorf("stats %+v: no segment lost at 2%%", st)
	}
	if l.farUSO && st.Reads*2 > st.Up.Packets+st.Down.Packets {
		t.Errorf("%d reads for %d packets: no super-packets", st.Reads, st.Up.Packets+st.Down.Packets)
	}

	ln, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_ = ln.SetReadBuffer(4 << 20)
	u := dialFar(t, l, "udp", ln.LocalAddr().String())
	sc, _ := u.(*net.UDPConn).SyscallConn()
	var serr error
	_ = sc.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_UDP, unix.UDP_SEGMENT, 100) })
	if serr != nil {
		t.Skipf("UDP_SEGMENT: %v", serr)
	}
	const writes, per = 100, 32
	st0 := l.Stats()
	dg := func(i int) []byte {
		b := bytes.Repeat([]byte{byte(i), byte(i >> 8)}, 50)
		binary.BigEndian.PutUint32(b, uint32(i))
		return b
	}
	for w := range writes {
		var b []byte
		for k := range per {
			b = append(b, dg(w*per+k)...)
		}
		if _, err := u.Write(b); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	seen := map[uint32]bool{}
	buf := make([]byte, 2048)
	for {
		_ = ln.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		n, err := ln.Read(buf)
		if err != nil {
			break
		}
		i := binary.BigEndian.Uint32(buf)
		if n != 100 || int(i) >= writes*per || !bytes.Equal(buf[:n], dg(int(i))) || seen[i] {
			t.Fatalf("datagram %d: %d bytes, corrupt or repeated", i, n)
		}
		seen[i] = true
	}
	st = l.Stats().Since(st0)
	lost := writes*per - len(seen)
	if int64(lost) != st.Up.Lost {
		t.Errorf("%d datagrams missing, the link lost %d", lost, st.Up.Lost)
	}
	if tol := LossTolerance(l.Spec.Loss, writes*per); math.Abs(float64(lost)/(writes*per)-0.02) > tol {
		t.Errorf("lost %d of %d, set 2%% ± %.4f", lost, writes*per, tol)
	}
	if l.farUSO && st.Reads > writes*2 {
		t.Errorf("%d reads for %d writes of %d datagrams: not carried as super-packets", st.Reads, writes, per)
	}
	if st := l.Stats(); st.WriteErrors != 0 {
		t.Errorf("%d writes refused by the TUN devices", st.WriteErrors)
	}
}

// TestRelayCPUIsItsOwn: the relay's CPU is its threads' since they
// started, and they end with the link, so a link opened after another
// counts none of the first one's work (a thread handed back to the
// runtime's pool carried it over: 0.7 s of CPU in 1.5 ms).
func TestRelayCPUIsItsOwn(t *testing.T) {
	a := openLink(t, "")
	c := dialFar(t, a, "tcp", echoServer(t, "127.0.0.1"))
	go func() { _, _ = c.Write(make([]byte, 16<<20)) }()
	if _, err := io.ReadFull(c, make([]byte, 16<<20)); err != nil {
		t.Fatal(err)
	}
	var tids []int
	for _, c := range []*threadClock{&a.rd.clock, &a.up.wclock, &a.down.wclock} {
		tids = append(tids, c.running())
	}
	busy := a.Stats().CPU
	a.Close()
	if left := threadsLeft(tids, time.Minute); len(left) > 0 {
		t.Errorf("relay threads %v live on after Close (busy %v)", left, busy)
	}
	b := openLink(t, "")
	start := time.Now()
	time.Sleep(20 * time.Millisecond)
	if cpu, wall := b.Stats().CPU, time.Since(start); cpu > 4*wall {
		t.Errorf("a new link's relay used %v of CPU in %v", cpu, wall)
	}
}

// TestRelayDirectKeepsOrder: the reader writes what is due at once
// itself and hands the rest to the writer; jitter without delay makes
// about half of the packets due at once, so the two take turns, and
// every datagram must still come back, in order (the link keeps order
// unless told to reorder), through both directions.
func TestRelayDirectKeepsOrder(t *testing.T) {
	for _, spin := range []time.Duration{0, 10 * time.Microsecond, time.Millisecond} {
		t.Run(fmt.Sprintf("spin=%v", spin), func(t *testing.T) {
			// The spin only changes when the reader reads; a spin
			// longer than any gap here has it read every echo
			// without a sleep.
			defer func(m time.Duration) { spinMax = m }(spinMax)
			spinMax = spin
			l := testDirectKeepsOrder(t)
			if hits := l.rd.spinHits.Load(); spin >= time.Millisecond && hits == 0 {
				t.Error("a reader spinning 1 ms between echoes never found one in its spin")
			}
		})
	}
}

func testDirectKeepsOrder(t *testing.T) *Link {
	l := openLink(t, "jitter=300us")
	ln := udpEcho(t)
	_ = ln.SetReadBuffer(1 << 20)
	c := dialFar(t, l, "udp", ln.LocalAddr().String())
	_ = c.(*net.UDPConn).SetReadBuffer(1 << 20)
	const n = 3000
	echoInOrder(t, c, n, 32, 100, 5*time.Second, nil)
	for _, p := range []*pump{l.up, l.down} {
		// The writer counts its entries out after the write that
		// delivered the last echo.
		for end := time.Now().Add(5 * time.Second); p.queued.Load() != 0 && time.Now().Before(end); {
			time.Sleep(time.Millisecond)
		}
		if p.directs.Load() == 0 || p.handed.Load() == 0 || p.queued.Load() != 0 {
			t.Errorf("the reader wrote %d batches itself and handed %d to the writer, %d entries left with it: the two did not take turns", p.directs.Load(), p.handed.Load(), p.queued.Load())
		}
	}
	if st := l.Stats(); st.Up.Delivered != n || st.Down.Delivered != n || st.WriteErrors != 0 {
		t.Errorf("stats %+v: want %d delivered each way, no write refused", st, n)
	}
	return l
}

// TestSpinnerBound: the reader's spin bound is spinMax while packets come
// within it, halves with each sleep a spin of spinMax would not have
// caught, down to none (an idle link spins no more), and a sleep that
// ended within spinMax sets it back.
func TestSpinnerBound(t *testing.T) {
	const max = 10 * time.Microsecond
	s := spinner{max: max, cur: max}
	s.spent = max
	s.slept(time.Microsecond) // a packet 1 µs past a spin of max: beyond max, halves
	if s.cur != max/2 {
		t.Fatalf("after a miss and a sleep of 1 µs past the spin: bound %v, want %v", s.cur, max/2)
	}
	var bounds []time.Duration
	for range 6 {
		s.spent = s.cur
		s.slept(50 * time.Millisecond) // idle
		bounds = append(bounds, s.cur)
	}
	if s.cur != 0 {
		t.Fatalf("idle: bounds %v, want them down to 0", bounds)
	}
	if s.spin(func() bool { t.Fatal("a spin of bound 0 polled"); return false }) {
		t.Fatal("a spin of bound 0 reported a packet")
	}
	s.slept(3 * time.Microsecond) // a packet 3 µs after the sleep began
	if s.cur != max {
		t.Fatalf("after a sleep of 3 µs: bound %v, want %v", s.cur, max)
	}
	n := 0
	if !s.spin(func() bool { n++; return n == 3 }) || n != 3 {
		t.Fatalf("spin with a packet at the third poll: polled %d", n)
	}
}

// udpEcho is a UDP server on 127.0.0.1 that sends every datagram back
// to its sender, closed at the test's or benchmark's end.
func udpEcho(tb testing.TB) *net.UDPConn {
	tb.Helper()
	ln, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := ln.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			_, _ = ln.WriteToUDPAddrPort(buf[:n], from)
		}
	}()
	return ln
}

// TestKernelDropsCounted: datagrams the kernel drops at a TUN device's
// full queue while the relay's reader is held (the link opened without
// its pumps, started after the floods) are counted, each way, and with
// what the relay read they make up all that was sent.
func TestKernelDropsCounted(t *testing.T) {
	needRoot(t)
	noPumps = true
	l, err := Open(Spec{})
	noPumps = false
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	// A socket at each end takes the datagrams (unread): no ICMP error
	// comes back to be counted the other way.
	listen := func(a netip.Addr) *net.UDPConn {
		c, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(a, 0)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	nearLn := listen(l.Near)
	var farLn *net.UDPConn
	l.Do(func() error { farLn = listen(l.Far); return nil })
	flood := func(c net.Conn, n int) {
		for i := 0; i < n; i++ {
			if _, err := c.Write([]byte("x")); err != nil {
				t.Fatalf("datagram %d: %v", i, err)
			}
		}
	}
	const up, down = txQueueLen + 300, txQueueLen + 500
	flood(dialFar(t, l, "udp4", nearLn.LocalAddr().String()), up)
	nearC, err := net.Dial("udp4", farLn.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nearC.Close()
	flood(nearC, down)
	l.up.start(&l.wg, "up")
	l.down.start(&l.wg, "down")
	l.rd.start(&l.wg)
	var s Stats
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if s = l.Stats(); s.Up.Packets+s.KernelDropsUp >= up && s.Down.Packets+s.KernelDropsDown >= down {
			break
		}
	}
	t.Logf("up: sent %d, relay read %d, kernel dropped %d; down: %d, %d, %d", up, s.Up.Packets, s.KernelDropsUp, down, s.Down.Packets, s.KernelDropsDown)
	if s.KernelDropsUp <= 0 || s.Up.Packets+s.KernelDropsUp != up || s.KernelDropsDown <= 0 || s.Down.Packets+s.KernelDropsDown != down {
		t.Fatalf("up: sent %d, the relay read %d, the kernel dropped %d; down: %d, %d, %d (want drops > 0, and the two adding up to what was sent)",
			up, s.Up.Packets, s.KernelDropsUp, down, s.Down.Packets, s.KernelDropsDown)
	}
	if why := s.RelayLimited(l.Spec, time.Second); !strings.Contains(why, fmt.Sprint(s.KernelDropsUp+s.KernelDropsDown)) {
		t.Errorf("RelayLimited = %q, want the kernel's %d drops named", why, s.KernelDropsUp+s.KernelDropsDown)
	}
}

// echoInOrder keeps window numbered datagrams of size bytes in flight on
// c, a UDP socket to an echo server, until n echoes have come back, each
// checked to be the next in order and whole. A read that fails or waits
// past wait fails the test, after onErr (if set) has had its say.
func echoInOrder(t *testing.T, c net.Conn, n, window, size int, wait time.Duration, onErr func()) {
	t.Helper()
	msg, got := make([]byte, size), make([]byte, 2048)
	sent := 0
	send := func() {
		binary.BigEndian.PutUint32(msg, uint32(sent))
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
		sent++
	}
	for range window {
		send()
	}
	for i := range n {
		_ = c.SetReadDeadline(time.Now().Add(wait))
		k, err := c.Read(got)
		if err != nil {
			if onErr != nil {
				onErr()
			}
			t.Fatalf("echo %d (%d sent): %v", i, sent, err)
		}
		if k != size || binary.BigEndian.Uint32(got) != uint32(i) {
			t.Fatalf("echo %d: %d bytes, datagram %d: lost or out of order", i, k, binary.BigEndian.Uint32(got))
		}
		if sent < n {
			send()
		}
	}
}
