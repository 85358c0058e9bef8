package link

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rtnl is a route netlink socket: the few requests the relay makes (a
// link up with an MTU, an address, a route), in the namespace of the
// thread that opened it. Plain x/sys/unix rather than a netlink library:
// three message types do not justify a dependency.
type rtnl struct {
	fd  int
	seq uint32
}

func openRtnl() (*rtnl, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return nil, fmt.Errorf("netlink socket: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("netlink bind: %w", err)
	}
	return &rtnl{fd: fd}, nil
}

func (r *rtnl) Close() error { return unix.Close(r.fd) }

// attr appends one rtattr.
func attr(b []byte, typ uint16, data []byte) []byte {
	l := unix.SizeofRtAttr + len(data)
	b = binary.NativeEndian.AppendUint16(b, uint16(l))
	b = binary.NativeEndian.AppendUint16(b, typ)
	b = append(b, data...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func u32(v uint32) []byte { return binary.NativeEndian.AppendUint32(nil, v) }

// do sends one request (header added here) and waits for its ack.
func (r *rtnl) do(typ uint16, flags uint16, body []byte) error {
	r.seq++
	msg := make([]byte, unix.SizeofNlMsghdr, unix.SizeofNlMsghdr+len(body))
	binary.NativeEndian.PutUint32(msg[0:], uint32(unix.SizeofNlMsghdr+len(body)))
	binary.NativeEndian.PutUint16(msg[4:], typ)
	binary.NativeEndian.PutUint16(msg[6:], flags|unix.NLM_F_REQUEST|unix.NLM_F_ACK)
	binary.NativeEndian.PutUint32(msg[8:], r.seq)
	msg = append(msg, body...)
	if err := unix.Sendto(r.fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return err
	}
	buf := make([]byte, 8192)
	for {
		n, _, err := unix.Recvfrom(r.fd, buf, 0)
		if err != nil {
			return err
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return err
		}
		for _, m := range msgs {
			if m.Header.Seq != r.seq || m.Header.Type != unix.NLMSG_ERROR || len(m.Data) < 4 {
				continue
			}
			if e := int32(binary.NativeEndian.Uint32(m.Data)); e != 0 {
				return unix.Errno(-e)
			}
			return nil
		}
	}
}

const txQueueLen = 4096

// linkUp sets the interface up with the MTU.
func (r *rtnl) linkUp(index, mtu int) error {
	ifi := unix.IfInfomsg{Family: unix.AF_UNSPEC, Index: int32(index), Flags: unix.IFF_UP, Change: unix.IFF_UP}
	b := (*[unix.SizeofIfInfomsg]byte)(unsafe.Pointer(&ifi))[:]
	b = append([]byte(nil), b...)
	if mtu > 0 { // 0: up only, as it is (loopback)
		b = attr(b, unix.IFLA_MTU, u32(uint32(mtu)))
		// A TUN device's queue is where packets wait for the relay to
		// read them; 500 by default, too few for a burst of a fast sender.
		b = attr(b, unix.IFLA_TXQLEN, u32(txQueueLen))
	}
	if err := r.do(unix.RTM_NEWLINK, 0, b); err != nil {
		return fmt.Errorf("set link %d up: %w", index, err)
	}
	return nil
}

// addAddr gives the interface local, with peer at the other end of a
// point-to-point link: the kernel routes peer/32 through it.
func (r *rtnl) addAddr(index int, local, peer netip.Addr) error {
	ifa := unix.IfAddrmsg{Family: unix.AF_INET, Prefixlen: 32, Scope: unix.RT_SCOPE_UNIVERSE, Index: uint32(index)}
	b := append([]byte(nil), (*[unix.SizeofIfAddrmsg]byte)(unsafe.Pointer(&ifa))[:]...)
	l, p := local.As4(), peer.As4()
	b = attr(b, unix.IFA_LOCAL, l[:])
	b = attr(b, unix.IFA_ADDRESS, p[:])
	if err := r.do(unix.RTM_NEWADDR, unix.NLM_F_CREATE|unix.NLM_F_EXCL, b); err != nil {
		return fmt.Errorf("add address %s peer %s: %w", local, peer, err)
	}
	return nil
}

// addRoute routes dst through the interface, from src.
func (r *rtnl) addRoute(index int, dst netip.Prefix, src netip.Addr) error {
	rt := unix.RtMsg{Family: unix.AF_INET, Dst_len: uint8(dst.Bits()), Table: unix.RT_TABLE_MAIN,
		Protocol: unix.RTPROT_BOOT, Scope: unix.RT_SCOPE_LINK, Type: unix.RTN_UNICAST}
	b := append([]byte(nil), (*[unix.SizeofRtMsg]byte)(unsafe.Pointer(&rt))[:]...)
	d, s := dst.Addr().As4(), src.As4()
	b = attr(b, unix.RTA_DST, d[:])
	b = attr(b, unix.RTA_PREFSRC, s[:])
	b = attr(b, unix.RTA_OIF, u32(uint32(index)))
	if err := r.do(unix.RTM_NEWROUTE, unix.NLM_F_CREATE|unix.NLM_F_EXCL, b); err != nil {
		return fmt.Errorf("add route %s: %w", dst, err)
	}
	return nil
}

// sysctl writes one /proc/sys/net file: in the namespace of the thread
// that calls it (the kernel resolves /proc/sys/net by the caller).
func sysctl(path, value string) error {
	if err := os.WriteFile("/proc/sys/net/"+path, []byte(value), 0); err != nil {
		return fmt.Errorf("sysctl net/%s: %w", path, err)
	}
	return nil
}

// txDropped is a device's tx_dropped (IFLA_STATS64): for a TUN device,
// the packets the kernel dropped because its queue to the reader was
// full (tun_net_xmit), which the relay never saw.
func (r *rtnl) txDropped(index int) (uint64, error) {
	r.seq++
	ifi := unix.IfInfomsg{Family: unix.AF_UNSPEC, Index: int32(index)}
	body := (*[unix.SizeofIfInfomsg]byte)(unsafe.Pointer(&ifi))[:]
	msg := make([]byte, unix.SizeofNlMsghdr, unix.SizeofNlMsghdr+len(body))
	binary.NativeEndian.PutUint32(msg[0:], uint32(unix.SizeofNlMsghdr+len(body)))
	binary.NativeEndian.PutUint16(msg[4:], unix.RTM_GETLINK)
	binary.NativeEndian.PutUint16(msg[6:], unix.NLM_F_REQUEST)
	binary.NativeEndian.PutUint32(msg[8:], r.seq)
	msg = append(msg, body...)
	if err := unix.Sendto(r.fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return 0, fmt.Errorf("get link %d: %w", index, err)
	}
	buf := make([]byte, 16384)
	for {
		n, _, err := unix.Recvfrom(r.fd, buf, 0)
		if err != nil {
			return 0, fmt.Errorf("get link %d: %w", index, err)
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return 0, fmt.Errorf("get link %d: %w", index, err)
		}
		for _, m := range msgs {
			if m.Header.Seq != r.seq {
				continue
			}
			if m.Header.Type == unix.NLMSG_ERROR && len(m.Data) >= 4 {
				return 0, fmt.Errorf("get link %d: %w", index, unix.Errno(-int32(binary.NativeEndian.Uint32(m.Data))))
			}
			if m.Header.Type != unix.RTM_NEWLINK {
				continue
			}
			attrs, err := syscall.ParseNetlinkRouteAttr(&m)
			if err != nil {
				return 0, fmt.Errorf("get link %d: %w", index, err)
			}
			for _, a := range attrs {
				// struct rtnl_link_stats64: rx/tx packets, bytes,
				// errors, then rx_dropped and tx_dropped (the 8th u64).
				if a.Attr.Type == unix.IFLA_STATS64 && len(a.Value) >= 64 {
					return binary.NativeEndian.Uint64(a.Value[56:]), nil
				}
			}
			return 0, fmt.Errorf("get link %d: no IFLA_STATS64", index)
		}
	}
}

// tunDrops reads the two TUN devices' tx_dropped through a route netlink
// socket opened in each one's namespace (a socket stays in the namespace
// it was opened in; /sys/class/net would show the mounter's). Index 0 is
// up (the far device, which the far side's packets enter), 1 down (the
// near device).
type tunDrops struct {
	mu         sync.Mutex
	rt         [2]*rtnl
	idx        [2]int
	base, last [2]uint64
}

// counts are the drops since the link opened, each way; the last read
// ones once the link is closed.
func (d *tunDrops) counts() (up, down int64) {
	if d == nil {
		return 0, 0
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, r := range d.rt {
		if r == nil {
			continue
		}
		if v, err := r.txDropped(d.idx[i]); err == nil {
			d.last[i] = v
		}
	}
	return int64(d.last[0] - d.base[0]), int64(d.last[1] - d.base[1])
}

func (d *tunDrops) close() {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, r := range d.rt {
		if r != nil {
			r.Close()
			d.rt[i] = nil
		}
	}
}
