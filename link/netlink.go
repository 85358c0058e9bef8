package link

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"os"
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
