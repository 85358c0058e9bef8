//go:build ignore

// ring-vs-tun: the CPU a 64-byte UDP datagram costs when a relay reads it
// from a TUN device (one read each), from the same device through one
// io_uring multishot read (uring), and when it reads it from an AF_PACKET
// TPACKET_V3 ring on a veth (none), with the sender's and the system's
// interrupt time beside: docs/network.md, "Small datagrams". As root:
//
//	unshare -n go run ring-vs-tun.go tun|uring|ring|ringother
//	DRAIN=5000 unshare -n go run ring-vs-tun.go tun|uring
//
// (ringother: the veth frames addressed to another MAC, so that the
// receiving IP stack drops them at once. DRAIN=K: K datagrams queued in
// the device while the reader waits, then drained, 40 times: the read
// path's own cost, no wake-up between packets.)
package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
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

func threadCPU(tid int) time.Duration {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/schedstat", tid))
	f := strings.Fields(string(b))
	ns, _ := strconv.ParseInt(f[0], 10, 64)
	return time.Duration(ns)
}

func softirq() int64 { // system-wide softirq+irq jiffies (USER_HZ)
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

// With DRAIN=K the sender queues K datagrams in the TUN device while the
// reader waits, then the reader drains them: its CPU per datagram with
// no wake-up between them (the read path alone, best case).
var (
	gate   = make(chan int64)
	target int64
	drain  = os.Getenv("DRAIN") != ""
)

func paused() {
	if drain && got.Load() >= target {
		target = <-gate
	}
}

func main() {
	mode := os.Args[1]
	dur := 2 * time.Second
	sh("ip link set lo up")
	var dst string
	var ready = make(chan int)
	switch mode {
	case "tun":
		fd, _ := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_NONBLOCK, 0)
		ifr, _ := unix.NewIfreq("tn")
		ifr.SetUint16(unix.IFF_TUN | unix.IFF_NO_PI)
		if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
			panic(err)
		}
		sh("ip addr add 10.8.0.1/24 dev tn && ip link set tn up txqueuelen 10000")
		dst = "10.8.0.2:9"
		go func() {
			runtime.LockOSThread()
			ready <- unix.Gettid()
			buf := make([]byte, 65536)
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			for stop.Load() == 0 {
				paused()
				_, err := unix.Read(fd, buf)
				if err == unix.EAGAIN {
					unix.Poll(pfd, 50)
					continue
				}
				got.Add(1)
			}
		}()
	case "uring":
		// The TUN device read by one multishot read (io_uring, Linux
		// 6.7) into provided buffers: the reads done inside one
		// io_uring_enter for all that came, no system call each.
		fd, _ := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_NONBLOCK, 0)
		ifr, _ := unix.NewIfreq("tn")
		ifr.SetUint16(unix.IFF_TUN | unix.IFF_NO_PI)
		if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
			panic(err)
		}
		sh("ip addr add 10.8.0.1/24 dev tn && ip link set tn up txqueuelen 10000")
		dst = "10.8.0.2:9"
		go func() {
			runtime.LockOSThread()
			r, err := uring.New(256)
			if err != nil {
				panic(err)
			}
			br, err := r.NewBufRing(1, nbufs, 2048)
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
				paused()
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
						n++
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
		}()
	case "ring", "ringother":
		sh("ip link add va type veth peer name vb && ip link set va up && ip link set vb up && ip addr add 10.9.0.1/24 dev va")
		vb, _ := net.InterfaceByName("vb")
		mac := vb.HardwareAddr.String()
		if mode == "ringother" {
			mac = "02:00:00:00:00:02" // not vb's: the IP stack drops it at once (PACKET_OTHERHOST)
		}
		sh("ip neigh add 10.9.0.2 lladdr " + mac + " dev va")
		dst = "10.9.0.2:9"
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, int(htons(unix.ETH_P_IP)))
		if err != nil {
			panic(err)
		}
		unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_VERSION, unix.TPACKET_V3)
		const bs, bn = 1 << 20, 32
		req := unix.TpacketReq3{Block_size: bs, Block_nr: bn, Frame_size: 2048, Frame_nr: bs / 2048 * bn, Retire_blk_tov: 1}
		if err := unix.SetsockoptTpacketReq3(fd, unix.SOL_PACKET, unix.PACKET_RX_RING, &req); err != nil {
			panic(err)
		}
		mem, err := unix.Mmap(fd, 0, bs*bn, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
		if err != nil {
			panic(err)
		}
		if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_IP), Ifindex: vb.Index}); err != nil {
			panic(err)
		}
		go func() {
			runtime.LockOSThread()
			ready <- unix.Gettid()
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN | unix.POLLERR}}
			blk := 0
			for stop.Load() == 0 {
				b := mem[blk*bs:]
				h := (*unix.TpacketHdrV1)(unsafe.Pointer(&b[8]))
				if atomic.LoadUint32(&h.Block_status)&unix.TP_STATUS_USER == 0 {
					unix.Poll(pfd, 50)
					continue
				}
				n := int(h.Num_pkts)
				off := int(h.Offset_to_first_pkt)
				var sum int
				for i := 0; i < n; i++ {
					p := (*unix.Tpacket3Hdr)(unsafe.Pointer(&b[off]))
					sum += int(b[off+int(p.Mac)+14+9]) // touch the IP header
					off += int(p.Next_offset)
				}
				_ = sum
				got.Add(int64(n))
				atomic.StoreUint32(&h.Block_status, unix.TP_STATUS_KERNEL)
				blk = (blk + 1) % bn
			}
		}()
	}
	rtid := <-ready
	c, err := net.Dial("udp", dst)
	if err != nil {
		panic(err)
	}
	sc, _ := c.(*net.UDPConn).SyscallConn()
	var sfd int
	sc.Control(func(f uintptr) { sfd = int(f) })
	if drain {
		k, _ := strconv.Atoi(os.Getenv("DRAIN"))
		msg := make([]byte, 64)
		var cpu time.Duration
		var n int64
		for range 40 {
			for range k {
				unix.Write(sfd, msg)
			}
			time.Sleep(time.Millisecond)
			g0, r0 := got.Load(), threadCPU(rtid)
			gate <- g0 + int64(k)
			for got.Load() < g0+int64(k) {
				time.Sleep(100 * time.Microsecond)
			}
			time.Sleep(time.Millisecond) // back at the gate
			cpu += threadCPU(rtid) - r0
			n += got.Load() - g0
		}
		fmt.Printf("%s drain %d: reader %.0f ns/pkt over %d\n", mode, k, float64(cpu)/float64(n), n)
		return
	}
	stid := make(chan int)
	var sent int64
	go func() {
		runtime.LockOSThread()
		stid <- unix.Gettid()
		msg := make([]byte, 64)
		for stop.Load() == 0 {
			if _, err := unix.Write(sfd, msg); err == nil {
				sent++
			}
		}
	}()
	st := <-stid
	time.Sleep(200 * time.Millisecond)
	r0, s0, g0, q0, t0 := threadCPU(rtid), threadCPU(st), got.Load(), softirq(), time.Now()
	time.Sleep(dur)
	r1, s1, g1, q1, el := threadCPU(rtid), threadCPU(st), got.Load(), softirq(), time.Since(t0)
	stop.Store(1)
	n := g1 - g0
	fmt.Printf("%s: %d pkt/s read; reader %.0f ns/pkt (busy %.0f%%), sender %.0f ns/pkt, system irq+softirq %.0f ns/pkt\n",
		mode, int64(float64(n)/el.Seconds()), float64(r1-r0)/float64(n), 100*float64(r1-r0)/float64(el), float64(s1-s0)/float64(n), float64(q1-q0)*1e7/float64(n))
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }
