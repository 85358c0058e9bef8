package link

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"
)

// The relay benchmarks run at rate=unlimited (and one at rtt=10ms), in
// each of the relay's modes (relayModes). pkt/s are packets on the
// emulated wire (each segment of a super-packet counts) that arrived;
// relayed/s those the relay wrote on (more, when the receiver fell
// behind and dropped some); reads/s the relay's read system calls;
// relay-ns/pkt the relay's CPU per wire packet (its three threads, both
// ways, ACKs included) and read-ns/pkt the reading thread's share;
// pkt/read and pkt/write how many it moved a system call. The goal is
// 200k packets/s each way on one core: relay-ns/pkt under 2.5 µs.
//
//	go test -run - -bench RelayUDP -benchtime 200000x ./link
//	go test -run - -bench RelayTCP -benchtime 300x ./link

// The relay's modes: "plain" one packet a read or write, as it was
// before the offloads; "offload" super-packets, read with a system call
// each; "uring" super-packets read through io_uring (the default).
// "handoff" is uring with every write left to the writer's thread, as
// before the reader wrote what was due itself.
var relayModes = []string{"plain", "offload", "uring", "handoff"}

// benchModes are relayModes, and uring with the reader's spin bounded by
// $WIREBENCH_RELAY_SPIN (a duration) when set.
func benchModes() []string {
	modes := append([]string(nil), relayModes...)
	if d := os.Getenv("WIREBENCH_RELAY_SPIN"); d != "" {
		modes = append(modes, "spin="+d)
	}
	if os.Getenv("WIREBENCH_RELAY_NAPI") != "" {
		modes = append(modes, "napi")
	}
	return modes
}

func openBenchLink(b *testing.B, mode, spec string) *Link {
	b.Helper()
	if testing.Short() {
		b.Skip("the relay benchmark; skipped with -short")
	}
	if !isRoot() {
		b.Skip("the relay needs root (network namespaces, TUN devices)")
	}
	noOffload = mode == "plain"
	defer func(m time.Duration) { spinMax = m }(spinMax)
	if d, ok := strings.CutPrefix(mode, "spin="); ok {
		// uring with another bound on the reader's spin (not in relayModes)
		var err error
		if spinMax, err = time.ParseDuration(d); err != nil {
			b.Fatal(err)
		}
		mode = "uring"
	}
	if mode == "napi" {
		// uring on devices opened with IFF_NAPI (not in relayModes)
		napiTUN, mode = true, "uring"
		defer func() { napiTUN = false }()
	}
	noUring = mode != "uring" && mode != "handoff"
	noDirect = mode == "handoff"
	noPumps = strings.HasPrefix(mode, "bare-")
	defer func() { noOffload, noUring, noDirect, noPumps = false, false, false, false }()
	sp, err := Parse(spec)
	if err != nil {
		b.Fatal(err)
	}
	if sp == nil {
		sp = &Spec{}
	}
	l, err := Open(*sp)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	return l
}

// readerCPU is the CPU of the relay's reading thread so far.
func readerCPU(l *Link) time.Duration { return l.rd.cpu() }

func reportRelay(b *testing.B, st Stats, readCPU, el time.Duration) {
	segs := st.Up.Packets + st.Down.Packets
	b.ReportMetric(float64(st.CPUPerPacket.Nanoseconds()), "relay-ns/pkt")
	if segs > 0 {
		// The reading thread's share: the rest is the writers'.
		b.ReportMetric(float64(readCPU.Nanoseconds())/float64(segs), "read-ns/pkt")
	}
	if st.Reads > 0 && st.Writes > 0 {
		b.ReportMetric(float64(segs)/float64(st.Reads), "pkt/read")
		b.ReportMetric(float64(st.Up.Delivered+st.Down.Delivered)/float64(st.Writes), "pkt/write")
	}
	b.ReportMetric(float64(st.Reads)/el.Seconds(), "reads/s")
	if st.Waits > 0 {
		b.ReportMetric(float64(st.Reads)/float64(st.Waits), "reads/wait")
	}
	if st.WriteErrors > 0 {
		b.Errorf("%d writes refused by the TUN device", st.WriteErrors)
	}
}

// BenchmarkRelayUDP is the relay's packet rate one way: 64-byte UDP
// datagrams sent from the far side as fast as one socket can, counted as
// they arrive here; gso=true sends them 64 at a time with UDP_SEGMENT,
// as quic-go does.
func BenchmarkRelayUDP(b *testing.B) {
	for _, gso := range []bool{false, true} {
		for _, mode := range benchModes() {
			b.Run(fmt.Sprintf("gso=%v/%s", gso, mode), func(b *testing.B) { benchUDP(b, mode, "", gso) })
		}
	}
	// With a delay the writer wakes at due times and writes what is due:
	// the relay as a study uses it.
	for _, mode := range benchModes() {
		b.Run("gso=false/"+mode+"/rtt=10ms", func(b *testing.B) { benchUDP(b, mode, "rtt=10ms", false) })
	}
}

func benchUDP(b *testing.B, mode, spec string, gso bool) {
	l := openBenchLink(b, mode, spec)
	ln, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	_ = ln.SetReadBuffer(8 << 20)
	var got atomic.Int64
	done := make(chan struct{})
	go func() {
		// recvmmsg, 64 at a time: a receiver that keeps up with the relay.
		defer close(done)
		pc := ipv4.NewPacketConn(ln)
		ms := make([]ipv4.Message, 64)
		for i := range ms {
			ms[i].Buffers = [][]byte{make([]byte, 2048)}
		}
		for {
			k, err := pc.ReadBatch(ms, 0)
			if err != nil {
				return
			}
			got.Add(int64(k))
		}
	}()
	c, err := l.farDial(b.Context(), "udp", ln.LocalAddr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	const size, burst = 64, 64
	msg := make([]byte, size)
	step := 1
	if gso {
		sc, _ := c.(*net.UDPConn).SyscallConn()
		var serr error
		_ = sc.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_UDP, unix.UDP_SEGMENT, size) })
		if serr != nil {
			b.Skipf("UDP_SEGMENT: %v", serr)
		}
		msg, step = make([]byte, size*burst), burst
	}
	st0, r0 := l.Stats(), readerCPU(l)
	b.ResetTimer()
	start := time.Now()
	n := 0
	for n < b.N {
		if _, err := c.Write(msg); err != nil {
			time.Sleep(10 * time.Microsecond) // ENOBUFS: the TUN queue is full; try again
			continue
		}
		n += step
	}
	// Until all have come, or none for 100 ms (lost: counted below).
	last, lastAt := got.Load(), time.Now()
	for got.Load() < int64(n) && time.Since(lastAt) < 100*time.Millisecond {
		time.Sleep(time.Millisecond)
		if g := got.Load(); g != last {
			last, lastAt = g, time.Now()
		}
	}
	el := lastAt.Sub(start)
	b.StopTimer()
	st, rc := l.Stats().Since(st0), readerCPU(l)-r0
	ln.Close()
	<-done
	b.ReportMetric(float64(got.Load())/el.Seconds(), "pkt/s")
	// What the relay wrote on: above pkt/s when the receiver fell behind.
	b.ReportMetric(float64(st.Up.Delivered)/el.Seconds(), "relayed/s")
	// Lost before the relay read them (the far TUN device's queue full),
	// or after it wrote them (the receiver's socket buffer full).
	b.ReportMetric(100*float64(int64(n)-st.Up.Packets)/float64(n), "%lost-in")
	b.ReportMetric(100*float64(st.Up.Delivered-got.Load())/float64(n), "%lost-out")
	reportRelay(b, st, rc, el)
}

// BenchmarkRelayTCP is a bulk TCP transfer from the far side to a
// server here: Mbit/s of payload, and the wire packets both ways
// (segments and ACKs).
func BenchmarkRelayTCP(b *testing.B) {
	for _, mode := range relayModes {
		b.Run(mode, func(b *testing.B) { benchTCP(b, mode) })
	}
}

func benchTCP(b *testing.B, mode string) {
	l := openBenchLink(b, mode, "")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	var got atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		n, _ := io.Copy(io.Discard, c)
		got.Store(n)
	}()
	c, err := l.farDial(b.Context(), "tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	const chunk = 1 << 20
	buf := make([]byte, chunk)
	b.SetBytes(chunk)
	st0, r0 := l.Stats(), readerCPU(l)
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if _, err := c.Write(buf); err != nil {
			b.Fatal(err)
		}
	}
	c.Close()
	<-done
	el := time.Since(start)
	b.StopTimer()
	st, rc := l.Stats().Since(st0), readerCPU(l)-r0
	if got.Load() != int64(b.N)*chunk {
		b.Fatalf("%d bytes arrived of %d", got.Load(), int64(b.N)*chunk)
	}
	b.ReportMetric(float64(got.Load())*8/el.Seconds()/1e6, "Mbit/s")
	b.ReportMetric(float64(st.Up.Packets+st.Down.Packets)/el.Seconds(), "pkt/s")
	reportRelay(b, st, rc, el)
}

// BenchmarkRelayEcho is request and answer: 64-byte UDP datagrams sent
// from the far side to an echo server here, with inflight of them
// outstanding (1: one at a time, a ping-pong; 16 or 64: streams), a
// datagram sent for each echo that comes back. An operation is one
// round trip: a packet up and a packet down. up/s and down/s are the
// packets each way; relay-ns/pkt the relay's CPU per packet (both
// ways), read-ns/pkt its reading thread's share (one thread reads both
// ways) and up-ns/pkt and down-ns/pkt each direction's writer per its
// own packets. Every echo is checked: in order, none lost.
//
// With WIREBENCH_BARE_RELAY naming a build of
// docs/figures/2026-11-29/network/tunrelay.c, modes bare-1t and bare-2t
// relay through it instead: the plainest TUN relay (a blocking read and
// a write a packet, in one thread or one a direction), the floor of
// any relay on TUN devices on the machine, its CPU counted the same way.
func BenchmarkRelayEcho(b *testing.B) {
	modes := benchModes()
	if os.Getenv("WIREBENCH_BARE_RELAY") != "" {
		modes = append(modes, "bare-1t", "bare-2t")
	}
	for _, inflight := range []int{1, 16, 64} {
		for _, mode := range modes {
			b.Run(fmt.Sprintf("inflight=%d/%s", inflight, mode), func(b *testing.B) { benchEcho(b, mode, "", inflight) })
		}
	}
}

func benchEcho(b *testing.B, mode, spec string, inflight int) {
	l := openBenchLink(b, mode, spec)
	ln := udpEcho(b)
	var bare *bareRelay
	if strings.HasPrefix(mode, "bare-") {
		bare = startBare(b, l, strings.TrimPrefix(mode, "bare-"))
	}
	c, err := l.farDial(b.Context(), "udp", ln.LocalAddr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	msg, got := make([]byte, 64), make([]byte, 2048)
	var sent, recv uint64
	send := func() {
		binary.BigEndian.PutUint64(msg, sent)
		if _, err := c.Write(msg); err != nil {
			b.Fatal(err)
		}
		sent++
	}
	st0 := l.Stats()
	u0, d0, r0 := l.up.cpu(), l.down.cpu(), readerCPU(l)
	var bare0 time.Duration
	if bare != nil {
		bare0 = bare.cpu()
	}
	b.ResetTimer()
	start := time.Now()
	for range min(inflight, b.N) {
		send()
	}
	for recv < uint64(b.N) {
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		n, err := c.Read(got)
		if err != nil {
			b.Fatalf("echo %d of %d (%d sent): %v", recv, b.N, sent, err)
		}
		if n != len(msg) || binary.BigEndian.Uint64(got) != recv {
			b.Fatalf("echo %d: %d bytes, sequence %d: lost or out of order", recv, n, binary.BigEndian.Uint64(got))
		}
		recv++
		if sent < uint64(b.N) {
			send()
		}
	}
	el := time.Since(start)
	b.StopTimer()
	if bare != nil {
		// Its packets are the echo's: one up and one down a round trip.
		b.ReportMetric(float64(b.N)/el.Seconds(), "up/s")
		b.ReportMetric(float64(b.N)/el.Seconds(), "down/s")
		b.ReportMetric(float64((bare.cpu()-bare0).Nanoseconds())/float64(2*b.N), "relay-ns/pkt")
		return
	}
	st := l.Stats().Since(st0)
	uc, dc, rc := l.up.cpu()-u0, l.down.cpu()-d0, readerCPU(l)-r0
	b.ReportMetric(float64(st.Up.Delivered)/el.Seconds(), "up/s")
	b.ReportMetric(float64(st.Down.Delivered)/el.Seconds(), "down/s")
	b.ReportMetric(float64(st.CPUPerPacket.Nanoseconds()), "relay-ns/pkt")
	if st.Up.Packets > 0 && st.Down.Packets > 0 {
		b.ReportMetric(float64(rc.Nanoseconds())/float64(st.Up.Packets+st.Down.Packets), "read-ns/pkt")
		b.ReportMetric(float64(uc.Nanoseconds())/float64(st.Up.Packets), "up-ns/pkt")
		b.ReportMetric(float64(dc.Nanoseconds())/float64(st.Down.Packets), "down-ns/pkt")
	}
	if st.Waits > 0 {
		b.ReportMetric(float64(st.Up.Packets+st.Down.Packets)/float64(st.Waits), "pkt/wait")
	}
	if n := st.Up.Packets + st.Down.Packets; n > 0 {
		b.ReportMetric(float64(l.rd.spinHits.Load())/float64(n), "spinhit/pkt")
	}
	if st.WriteErrors > 0 {
		b.Errorf("%d writes refused by the TUN device", st.WriteErrors)
	}
}

// bareRelay is tunrelay.c relaying the link's devices.
type bareRelay struct{ pid int }

func startBare(b *testing.B, l *Link, mode string) *bareRelay {
	var files []*os.File
	for _, fd := range []int{l.near, l.far} {
		d, err := unix.Dup(fd)
		if err != nil {
			b.Fatal(err)
		}
		files = append(files, os.NewFile(uintptr(d), "tun"))
	}
	cmd := exec.Command(os.Getenv("WIREBENCH_BARE_RELAY"), mode)
	cmd.ExtraFiles, cmd.Stderr = files, os.Stderr
	err := cmd.Start()
	for _, f := range files {
		f.Close()
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return &bareRelay{cmd.Process.Pid}
}

// cpu is the CPU time of all its threads so far.
func (r *bareRelay) cpu() time.Duration {
	var d time.Duration
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", r.pid))
	for _, t := range tasks {
		bs, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		if f := strings.Fields(string(bs)); len(f) > 0 {
			ns, _ := strconv.ParseInt(f[0], 10, 64)
			d += time.Duration(ns)
		}
	}
	return d
}
