//go:build ignore

// xdp-vs-tun: the whole machine's CPU a 64-byte UDP datagram costs when a
// relay reads it from a TUN device (one read system call each: tun), from
// the same device through one io_uring multishot read (uring: the relay's
// reader), and from an AF_XDP socket on a veth whose far end a sender
// writes into (xdp: native XDP on the veth, an XDP program redirecting
// every frame to the socket through an XSKMAP, copy mode; xdpskb: the same
// program in generic, skb mode; xdpzc: zero-copy asked for, which veth
// refuses). Per datagram
// read: the reading thread, the sending thread (in whose context the
// veth's receive softirq runs), the kernel's ksoftirqd threads, every
// thread of this process, and the machine's softirq+irq ticks (those are
// sampled, and mostly already inside the threads' figures: this kernel has
// no IRQ_TIME_ACCOUNTING). docs/network.md, "AF_XDP". As root:
//
//	unshare -n go run xdp-vs-tun.go tun|uring|xdp|xdpskb|xdpzc
//	RATE=60 unshare -n go run xdp-vs-tun.go ...   # 60 datagrams a millisecond, paced
//	GSO=64 unshare -n go run xdp-vs-tun.go tun|xdp # 64 datagrams a write (UDP_SEGMENT)
//
// Without RATE the sender floods, one write a datagram, as
// BenchmarkRelayUDP gso=false does; with RATE it sends RATE datagrams
// every millisecond, a rate both readers keep up with, so that no
// datagram is dropped and the figures are the cost of one delivered.
// With GSO=K the sender writes K datagrams at once with UDP_SEGMENT, as
// quic-go does; the TUN device then has the relay's offloads (a virtio-net
// header, UDP segmentation left to the reader: one read a write), while a
// veth with an XDP program on its peer cannot take them (the kernel clears
// the peer's software GSO when XDP is attached), so each datagram crosses
// it alone.
// The BPF program is six instructions loaded with bpf(2) directly.
package main

import (
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/wirebench/wirebench/internal/uring"
	"golang.org/x/sys/unix"
)

const nbufs = 256

func schedstat(path string) time.Duration {
	b, _ := os.ReadFile(path)
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	ns, _ := strconv.ParseInt(f[0], 10, 64)
	return time.Duration(ns)
}

func threadCPU(tid int) time.Duration {
	return schedstat(fmt.Sprintf("/proc/self/task/%d/schedstat", tid))
}

func processCPU() time.Duration {
	ts, _ := filepath.Glob("/proc/self/task/*/schedstat")
	var sum time.Duration
	for _, t := range ts {
		sum += schedstat(t)
	}
	return sum
}

var ksoftirqd []string

func findKsoftirqd() {
	ps, _ := filepath.Glob("/proc/[0-9]*/comm")
	for _, p := range ps {
		if b, _ := os.ReadFile(p); strings.HasPrefix(string(b), "ksoftirqd/") {
			ksoftirqd = append(ksoftirqd, filepath.Join(filepath.Dir(p), "schedstat"))
		}
	}
}

func ksoftirqdCPU() time.Duration {
	var sum time.Duration
	for _, p := range ksoftirqd {
		sum += schedstat(p)
	}
	return sum
}

func softirq() int64 { // system-wide softirq+irq ticks (USER_HZ)
	b, _ := os.ReadFile("/proc/stat")
	f := strings.Fields(strings.SplitN(string(b), "\n", 2)[0])
	a, _ := strconv.ParseInt(f[6], 10, 64)
	c, _ := strconv.ParseInt(f[7], 10, 64)
	return a + c
}

func sh(s string) {
	if out, err := exec.Command("sh", "-c", s).CombinedOutput(); err != nil {
		panic(fmt.Sprint(s, err, string(out)))
	}
}

var got, stop atomic.Int64

// gso: datagrams a write (GSO=K); the TUN device then reads super-packets
// behind a virtio-net header, and count() says how many datagrams of 64
// bytes a read carried.
var gso, _ = strconv.Atoi(os.Getenv("GSO"))

const vnetHdrLen = 10

func count(n int) int64 {
	if gso == 0 {
		return 1
	}
	return int64((n - vnetHdrLen - 28 + 63) / 64)
}

func main() {
	mode := os.Args[1]
	dur := 2 * time.Second
	sh("ip link set lo up")
	findKsoftirqd()
	var dst string
	ready := make(chan int)
	var stats func() string
	switch mode {
	case "tun", "uring":
		fd, _ := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_NONBLOCK, 0)
		ifr, _ := unix.NewIfreq("tn")
		flags := uint16(unix.IFF_TUN | unix.IFF_NO_PI)
		if gso > 0 {
			flags |= unix.IFF_VNET_HDR
		}
		ifr.SetUint16(flags)
		if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
			panic(err)
		}
		if gso > 0 {
			if err := unix.IoctlSetInt(fd, unix.TUNSETOFFLOAD, unix.TUN_F_CSUM|unix.TUN_F_TSO4|unix.TUN_F_TSO6|unix.TUN_F_USO4|unix.TUN_F_USO6); err != nil {
				panic(err)
			}
		}
		sh("ip addr add 10.8.0.1/24 dev tn && ip link set tn up txqueuelen 10000")
		dst = "10.8.0.2:9"
		stats = func() string { return "the device's drops: sent - read" }
		if mode == "tun" {
			go readTUN(fd, ready)
		} else {
			go readUring(fd, ready)
		}
	case "xdp", "xdpskb", "xdpzc":
		sh("ip link add va type veth peer name vb && ip link set va up && ip link set vb up && ip addr add 10.9.0.1/24 dev va")
		vb, _ := net.InterfaceByName("vb")
		sh("ip neigh add 10.9.0.2 lladdr " + vb.HardwareAddr.String() + " dev va")
		dst = "10.9.0.2:9"
		tso := tsoOn("va")
		x, err := openXSK(vb.Index, mode)
		if err != nil {
			fmt.Printf("%s: %v\n", mode, err)
			os.Exit(1)
		}
		// The kernel takes software GSO from a veth whose peer has an
		// XDP program: TCP segments and UDP_SEGMENT sends are cut
		// before they cross.
		fmt.Printf("va TSO before the XDP program: %v, after: %v\n", tso, tsoOn("va"))
		stats = x.stats
		go x.read(ready)
	default:
		panic("mode: tun, uring, xdp, xdpskb or xdpzc")
	}
	rtid := <-ready
	c, err := net.Dial("udp", dst)
	if err != nil {
		panic(err)
	}
	sc, _ := c.(*net.UDPConn).SyscallConn()
	var sfd int
	sc.Control(func(f uintptr) { sfd = int(f) })
	rate, _ := strconv.Atoi(os.Getenv("RATE"))
	msg, each := make([]byte, 64), int64(1)
	if gso > 0 {
		if err := unix.SetsockoptInt(sfd, unix.SOL_UDP, unix.UDP_SEGMENT, 64); err != nil {
			panic(err)
		}
		msg, each = make([]byte, 64*gso), int64(gso)
	}
	stid := make(chan int)
	var sent atomic.Int64
	go func() {
		runtime.LockOSThread()
		stid <- unix.Gettid()
		next := time.Now()
		for stop.Load() == 0 {
			if rate > 0 {
				for range rate {
					if _, err := unix.Write(sfd, msg); err == nil {
						sent.Add(each)
					}
				}
				next = next.Add(time.Millisecond)
				time.Sleep(time.Until(next))
				continue
			}
			if _, err := unix.Write(sfd, msg); err == nil {
				sent.Add(each)
			}
		}
	}()
	st := <-stid
	fmt.Fprintf(os.Stderr, "reader tid %d, sender tid %d\n", rtid, st) // for perf report --tid
	time.Sleep(300 * time.Millisecond)
	r0, s0, p0, k0, g0, n0, q0, t0 := threadCPU(rtid), threadCPU(st), processCPU(), ksoftirqdCPU(), got.Load(), sent.Load(), softirq(), time.Now()
	time.Sleep(dur)
	r1, s1, p1, k1, g1, n1, q1, el := threadCPU(rtid), threadCPU(st), processCPU(), ksoftirqdCPU(), got.Load(), sent.Load(), softirq(), time.Since(t0)
	stop.Store(1)
	n := float64(g1 - g0)
	per := func(d time.Duration) float64 { return float64(d) / n }
	fmt.Printf("%s (GSO=%d, RATE=%d): sent %d/s, read %d/s; per datagram read: reader %.0f ns (busy %.0f%%), sender %.0f ns, ksoftirqd %.0f ns, whole process %.0f ns, process+ksoftirqd %.0f ns; softirq+irq ticks %.0f ns; %s\n",
		mode, gso, rate, int64(float64(n1-n0)/el.Seconds()), int64(n/el.Seconds()),
		per(r1-r0), 100*float64(r1-r0)/float64(el), per(s1-s0), per(k1-k0), per(p1-p0), per(p1-p0+k1-k0),
		float64(q1-q0)*1e7/n, stats())
}

// tsoOn: the device's TCP segmentation offload, by the legacy ethtool
// ioctl (ETHTOOL_GTSO).
func tsoOn(dev string) bool {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		panic(err)
	}
	defer unix.Close(fd)
	val := [2]uint32{unix.ETHTOOL_GTSO, 0}
	var ifr [40]byte
	copy(ifr[:15], dev)
	*(*uintptr)(unsafe.Pointer(&ifr[16])) = uintptr(unsafe.Pointer(&val))
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr))); e != 0 {
		panic(e)
	}
	return val[1] != 0
}

func readTUN(fd int, ready chan int) {
	runtime.LockOSThread()
	ready <- unix.Gettid()
	buf := make([]byte, 65536)
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	var sum int
	for stop.Load() == 0 {
		n, err := unix.Read(fd, buf)
		if err == unix.EAGAIN {
			unix.Poll(pfd, 50)
			continue
		}
		if n > vnetHdrLen+9 {
			sum += int(buf[vnetHdrLen+9]) // touch the IP header
		}
		got.Add(count(n))
	}
	_ = sum
}

// readUring: the TUN device read by one multishot read (io_uring, Linux
// 6.7) into provided buffers, as the relay reads it.
func readUring(fd int, ready chan int) {
	runtime.LockOSThread()
	r, err := uring.New(256)
	if err != nil {
		panic(err)
	}
	size := 2048
	if gso > 0 {
		size = 65536
	}
	br, err := r.NewBufRing(1, nbufs, size)
	if err != nil {
		panic(err)
	}
	ready <- unix.Gettid()
	arm := func() {
		q := r.SQE()
		q.Opcode, q.Fd, q.Flags, q.BufIndex = uring.OpReadMultishot, int32(fd), uring.SqeBufferSelect, 1
	}
	arm()
	var sum int
	for stop.Load() == 0 {
		if err := r.EnterBlocking(1, 50e6); err != nil {
			panic(err)
		}
		var n int64
		rearm := false
		r.Completions(func(c *uring.CQE) {
			if c.Res < 0 {
				if c.Res != -int32(unix.ENOBUFS) {
					panic(unix.Errno(-c.Res))
				}
			} else {
				bid := uint16(c.Flags >> 16)
				sum += int(br.Buf(bid, int(c.Res))[9]) // touch the IP header
				br.Give(bid)
				n += count(int(c.Res))
			}
			if c.Flags&uring.CQEFMore == 0 {
				rearm = true
			}
		})
		br.Publish()
		if rearm {
			arm()
		}
		got.Add(n)
	}
}

// AF_XDP

const (
	frameSize = 2048
	nframes   = 4096 // UMEM: 8 MiB
	ringSize  = 2048 // RX and fill rings; the fill ring starts full
)

type ring struct {
	prod, cons *uint32
	desc       unsafe.Pointer
	mask       uint32
}

type xsk struct {
	fd       int
	umem     []byte
	rx, fill ring
}

func bpf(cmd int, attr []byte) (int, error) {
	r, _, e := unix.Syscall(unix.SYS_BPF, uintptr(cmd), uintptr(unsafe.Pointer(&attr[0])), uintptr(len(attr)))
	if e != 0 {
		return -1, e
	}
	return int(r), nil
}

func setsockopt(fd, opt int, p unsafe.Pointer, n uintptr) error {
	_, _, e := unix.Syscall6(unix.SYS_SETSOCKOPT, uintptr(fd), unix.SOL_XDP, uintptr(opt), uintptr(p), n, 0)
	if e != 0 {
		return e
	}
	return nil
}

func getsockopt(fd, opt int, p unsafe.Pointer, n uintptr) error {
	l := uint32(n)
	_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), unix.SOL_XDP, uintptr(opt), uintptr(p), uintptr(unsafe.Pointer(&l)), 0)
	if e != 0 {
		return e
	}
	return nil
}

func mapRing(fd int, off unix.XDPRingOffset, pgoff int64, n, size uint32) (ring, error) {
	mem, err := unix.Mmap(fd, pgoff, int(off.Desc)+int(n*size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return ring{}, err
	}
	return ring{
		prod: (*uint32)(unsafe.Pointer(&mem[off.Producer])),
		cons: (*uint32)(unsafe.Pointer(&mem[off.Consumer])),
		desc: unsafe.Pointer(&mem[off.Desc]),
		mask: n - 1,
	}, nil
}

// openXSK: an AF_XDP socket on queue 0 of ifindex, an XSKMAP holding it,
// and an XDP program redirecting every frame of that queue to it, attached
// by a BPF link (gone with the process).
func openXSK(ifindex int, mode string) (*xsk, error) {
	fd, err := unix.Socket(unix.AF_XDP, unix.SOCK_RAW, 0)
	if err != nil {
		return nil, fmt.Errorf("AF_XDP socket: %w", err)
	}
	x := &xsk{fd: fd}
	if x.umem, err = unix.Mmap(-1, 0, nframes*frameSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_POPULATE); err != nil {
		return nil, err
	}
	reg := unix.XDPUmemReg{Addr: uint64(uintptr(unsafe.Pointer(&x.umem[0]))), Len: uint64(len(x.umem)), Size: frameSize}
	if err := setsockopt(fd, unix.XDP_UMEM_REG, unsafe.Pointer(&reg), unsafe.Sizeof(reg)); err != nil {
		return nil, fmt.Errorf("XDP_UMEM_REG: %w", err)
	}
	for _, o := range []int{unix.XDP_UMEM_FILL_RING, unix.XDP_UMEM_COMPLETION_RING, unix.XDP_RX_RING} {
		n := int32(ringSize)
		if err := setsockopt(fd, o, unsafe.Pointer(&n), 4); err != nil {
			return nil, fmt.Errorf("ring %d: %w", o, err)
		}
	}
	var off unix.XDPMmapOffsets
	if err := getsockopt(fd, unix.XDP_MMAP_OFFSETS, unsafe.Pointer(&off), unsafe.Sizeof(off)); err != nil {
		return nil, err
	}
	if x.rx, err = mapRing(fd, off.Rx, unix.XDP_PGOFF_RX_RING, ringSize, uint32(unsafe.Sizeof(unix.XDPDesc{}))); err != nil {
		return nil, err
	}
	if x.fill, err = mapRing(fd, off.Fr, unix.XDP_UMEM_PGOFF_FILL_RING, ringSize, 8); err != nil {
		return nil, err
	}
	if _, err = mapRing(fd, off.Cr, unix.XDP_UMEM_PGOFF_COMPLETION_RING, ringSize, 8); err != nil {
		return nil, err
	}
	for i := range uint32(ringSize) {
		*(*uint64)(unsafe.Add(x.fill.desc, 8*i)) = uint64(i) * frameSize
	}
	atomic.StoreUint32(x.fill.prod, ringSize)

	bind := uint16(unix.XDP_COPY)
	if mode == "xdpzc" {
		bind = unix.XDP_ZEROCOPY
	}
	if err := unix.Bind(fd, &unix.SockaddrXDP{Flags: bind, Ifindex: uint32(ifindex), QueueID: 0}); err != nil {
		return nil, fmt.Errorf("bind (flags %#x): %w", bind, err)
	}

	le := binary.LittleEndian
	attr := make([]byte, 128)
	le.PutUint32(attr[0:], unix.BPF_MAP_TYPE_XSKMAP)
	le.PutUint32(attr[4:], 4)
	le.PutUint32(attr[8:], 4)
	le.PutUint32(attr[12:], 1)
	mfd, err := bpf(unix.BPF_MAP_CREATE, attr)
	if err != nil {
		return nil, fmt.Errorf("XSKMAP: %w", err)
	}
	key, val := uint32(0), uint32(fd)
	attr = make([]byte, 128)
	le.PutUint32(attr[0:], uint32(mfd))
	le.PutUint64(attr[8:], uint64(uintptr(unsafe.Pointer(&key))))
	le.PutUint64(attr[16:], uint64(uintptr(unsafe.Pointer(&val))))
	if _, err := bpf(unix.BPF_MAP_UPDATE_ELEM, attr); err != nil {
		return nil, fmt.Errorf("XSKMAP update: %w", err)
	}
	// r2 = ctx->rx_queue_index; r1 = map; r3 = XDP_PASS (the action
	// when the queue has no socket); return bpf_redirect_map(r1, r2, r3)
	insn := func(op, regs uint8, off int16, imm int32) []byte {
		b := make([]byte, 8)
		b[0], b[1] = op, regs
		le.PutUint16(b[2:], uint16(off))
		le.PutUint32(b[4:], uint32(imm))
		return b
	}
	var prog []byte
	prog = append(prog, insn(0x61, 1<<4|2, 16, 0)...)                              // ldxw r2, [r1+16]
	prog = append(prog, insn(0x18, unix.BPF_PSEUDO_MAP_FD<<4|1, 0, int32(mfd))...) // lddw r1, map
	prog = append(prog, insn(0, 0, 0, 0)...)
	prog = append(prog, insn(0xb7, 3, 0, 2)...)  // mov r3, XDP_PASS
	prog = append(prog, insn(0x85, 0, 0, 51)...) // call bpf_redirect_map
	prog = append(prog, insn(0x95, 0, 0, 0)...)  // exit
	license := []byte("GPL\x00")
	logbuf := make([]byte, 4096)
	attr = make([]byte, 128)
	le.PutUint32(attr[0:], unix.BPF_PROG_TYPE_XDP)
	le.PutUint32(attr[4:], uint32(len(prog)/8))
	le.PutUint64(attr[8:], uint64(uintptr(unsafe.Pointer(&prog[0]))))
	le.PutUint64(attr[16:], uint64(uintptr(unsafe.Pointer(&license[0]))))
	le.PutUint32(attr[24:], 1)
	le.PutUint32(attr[28:], uint32(len(logbuf)))
	le.PutUint64(attr[32:], uint64(uintptr(unsafe.Pointer(&logbuf[0]))))
	le.PutUint32(attr[68:], unix.BPF_XDP)
	pfd, err := bpf(unix.BPF_PROG_LOAD, attr)
	for try := 0; err == unix.EAGAIN && try < 5; try++ { // the verifier interrupted by a signal
		pfd, err = bpf(unix.BPF_PROG_LOAD, attr)
	}
	runtime.KeepAlive(prog)
	if err != nil {
		return nil, fmt.Errorf("XDP program: %w: %s", err, strings.TrimRight(string(logbuf), "\x00"))
	}
	flags := uint32(unix.XDP_FLAGS_DRV_MODE)
	if mode == "xdpskb" {
		flags = unix.XDP_FLAGS_SKB_MODE
	}
	attr = make([]byte, 128)
	le.PutUint32(attr[0:], uint32(pfd))
	le.PutUint32(attr[4:], uint32(ifindex))
	le.PutUint32(attr[8:], unix.BPF_XDP)
	le.PutUint32(attr[12:], flags)
	if _, err := bpf(unix.BPF_LINK_CREATE, attr); err != nil {
		return nil, fmt.Errorf("attach XDP (flags %#x): %w", flags, err)
	}
	return x, nil
}

func (x *xsk) read(ready chan int) {
	runtime.LockOSThread()
	ready <- unix.Gettid()
	pfd := []unix.PollFd{{Fd: int32(x.fd), Events: unix.POLLIN}}
	var sum int
	cons := atomic.LoadUint32(x.rx.cons)
	fprod := atomic.LoadUint32(x.fill.prod)
	for stop.Load() == 0 {
		prod := atomic.LoadUint32(x.rx.prod)
		if prod == cons {
			unix.Poll(pfd, 50)
			continue
		}
		got.Add(int64(prod - cons))
		for ; cons != prod; cons++ {
			d := (*unix.XDPDesc)(unsafe.Add(x.rx.desc, uintptr(cons&x.rx.mask)*unsafe.Sizeof(unix.XDPDesc{})))
			sum += int(x.umem[d.Addr+14+9]) // touch the IP header
			*(*uint64)(unsafe.Add(x.fill.desc, 8*uintptr(fprod&x.fill.mask))) = d.Addr &^ (frameSize - 1)
			fprod++
		}
		atomic.StoreUint32(x.rx.cons, cons)
		atomic.StoreUint32(x.fill.prod, fprod)
	}
	_ = sum
}

func (x *xsk) stats() string {
	var s unix.XDPStatistics
	if err := getsockopt(x.fd, unix.XDP_STATISTICS, unsafe.Pointer(&s), unsafe.Sizeof(s)); err != nil {
		return err.Error()
	}
	return fmt.Sprintf("xsk rx_dropped %d, ring full %d, fill empty %d", s.Rx_dropped, s.Rx_ring_full, s.Rx_fill_ring_empty_descs)
}
