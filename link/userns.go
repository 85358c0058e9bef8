package link

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"
)

// Unprivileged, the link is set up by the program started again in a
// user namespace and a network namespace of its own (StartInUserns),
// where it holds CAP_NET_ADMIN and CAP_SYS_ADMIN over what it creates.
// Its network namespace takes the near side's place, and the host's
// loopback, where the servers are, is out of its reach: the process
// left outside dials them for it. When the far side opens a TCP
// connection to (or sends a datagram to) a port that no server inside
// listens on, the relay, before it carries that first packet, binds the
// port on the near side and asks the outside process for a socket
// connected to the same port on the host's loopback; the two are then
// spliced. Both ends of the emulated link still run the kernel's own TCP
// and QUIC; the server's connection is a second one, on the host's
// loopback, from the outside process.

// usernsEnv names the socket (a file descriptor number) over which the
// process started by StartInUserns asks for the host's sockets.
const usernsEnv = "WIREBENCH_LINK_USERNS"

// StartInUserns starts cmd (this program again, as a rule) in a user
// namespace and a network namespace of its own, as the caller's user
// mapped to root, and serves its requests for sockets on the host's
// loopback while it runs; the caller waits for it. ErrPrivilege, with
// what is missing and how to get it, when the kernel refuses.
func StartInUserns(cmd *exec.Cmd) error {
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		return fmt.Errorf("%w: %v (modprobe tun)", ErrPrivilege, err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	host, child := os.NewFile(uintptr(fds[0]), "userns-host"), os.NewFile(uintptr(fds[1]), "userns-child")
	defer child.Close()
	cmd.ExtraFiles = append(cmd.ExtraFiles, child)
	cmd.Env = append(cmd.Environ(), fmt.Sprintf("%s=%d", usernsEnv, 2+len(cmd.ExtraFiles)))
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	sp := cmd.SysProcAttr
	sp.Cloneflags |= unix.CLONE_NEWUSER | unix.CLONE_NEWNET
	sp.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
	sp.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
	sp.GidMappingsEnableSetgroups = false
	// Its namespaces, devices and the command it runs go with it.
	sp.Pdeathsig = syscall.SIGKILL
	if err := cmd.Start(); err != nil {
		host.Close()
		var errno syscall.Errno
		if errors.As(err, &errno) && (errno == unix.EPERM || errno == unix.EACCES || errno == unix.ENOSPC || errno == unix.EUSERS || errno == unix.EINVAL) {
			return fmt.Errorf("%w, or user namespaces: running as uid %d, and the kernel refused a user namespace (%v)%s", ErrPrivilege, os.Getuid(), errno, usernsHint())
		}
		return err
	}
	c, err := net.FileConn(host)
	host.Close()
	if err != nil {
		return err
	}
	go serveHost(c.(*net.UnixConn))
	return nil
}

// usernsHint says which of the kernel's switches refuses unprivileged
// user namespaces here, and how to turn it.
func usernsHint() string {
	read := func(p string) string {
		b, err := os.ReadFile("/proc/sys/" + p)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	switch {
	case read("kernel/unprivileged_userns_clone") == "0":
		return ": sysctl -w kernel.unprivileged_userns_clone=1, or run as root"
	case read("kernel/apparmor_restrict_unprivileged_userns") == "1":
		return ": AppArmor restricts them (sysctl -w kernel.apparmor_restrict_unprivileged_userns=0), or run as root"
	case read("user/max_user_namespaces") == "0":
		return ": user.max_user_namespaces is 0 (sysctl -w user.max_user_namespaces=15000), or run as root"
	}
	if os.Getuid() == 0 {
		// Root without the capabilities: a container's.
		return ": give the container CAP_NET_ADMIN and CAP_SYS_ADMIN and /dev/net/tun (docker run --cap-add NET_ADMIN --cap-add SYS_ADMIN --device /dev/net/tun)"
	}
	return ": run as root (sudo), or where user namespaces are allowed (a container's seccomp profile may forbid them)"
}

// serveHost answers the requests of the process in the namespaces: "tcp
// ADDR:PORT" or "udp ADDR:PORT", each a socket connected to that address
// on the host's loopback (nothing else is dialled), sent back with a
// zero byte, or 1 and the error.
func serveHost(c *net.UnixConn) {
	defer c.Close()
	buf := make([]byte, 128)
	for {
		n, _, _, _, err := c.ReadMsgUnix(buf, nil)
		if err != nil || n == 0 {
			return
		}
		fd, err := hostSocket(string(buf[:n]))
		if err != nil {
			if _, err := c.Write(append([]byte{1}, err.Error()...)); err != nil {
				return
			}
			continue
		}
		_, _, err = c.WriteMsgUnix([]byte{0}, unix.UnixRights(fd), nil)
		unix.Close(fd)
		if err != nil {
			return
		}
	}
}

// hostSocket is a socket connected to a request's address, which must
// be on the loopback.
func hostSocket(req string) (int, error) {
	network, addr, _ := strings.Cut(req, " ")
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || !ap.Addr().Is4() || !ap.Addr().IsLoopback() {
		return -1, fmt.Errorf("not a loopback address: %q", addr)
	}
	typ := unix.SOCK_STREAM
	if network == "udp" {
		typ = unix.SOCK_DGRAM
	}
	fd, err := unix.Socket(unix.AF_INET, typ|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if typ == unix.SOCK_DGRAM {
		// The answers wait here for the proxy inside (proxyUDPBuffer).
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, proxyUDPBuffer)
	}
	// On the loopback a connect is answered at once.
	if err := unix.Connect(fd, &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// hostDialer asks the process outside for sockets on the host's loopback.
type hostDialer struct {
	mu sync.Mutex
	c  *net.UnixConn
}

func (h *hostDialer) dial(network string, ap netip.AddrPort) (net.Conn, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, err := h.c.Write([]byte(network + " " + ap.String())); err != nil {
		return nil, err
	}
	b, oob := make([]byte, 256), make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := h.c.ReadMsgUnix(b, oob)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, io.ErrUnexpectedEOF
	}
	if b[0] != 0 {
		return nil, errors.New(string(b[1:n]))
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, fmt.Errorf("no socket in the answer: %v", err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return nil, fmt.Errorf("no socket in the answer: %v", err)
	}
	f := os.NewFile(uintptr(fds[0]), network)
	defer f.Close()
	return net.FileConn(f)
}

var (
	usernsOnce sync.Once
	usernsHost *hostDialer
	usernsErr  error
)

// InUserns says whether this process was started by StartInUserns.
func InUserns() bool {
	h, _ := fromUserns()
	return h != nil
}

// fromUserns takes over, once, what StartInUserns gave this process: the
// socket to the process outside (kept from the commands it runs), and
// its network namespace's loopback, brought up for the servers here.
func fromUserns() (*hostDialer, error) {
	usernsOnce.Do(func() {
		v := os.Getenv(usernsEnv)
		if v == "" {
			return
		}
		os.Unsetenv(usernsEnv)
		fd, err := strconv.Atoi(v)
		if err != nil || fd < 3 {
			usernsErr = fmt.Errorf("$%s=%q", usernsEnv, v)
			return
		}
		unix.CloseOnExec(fd)
		f := os.NewFile(uintptr(fd), "userns-host")
		c, err := net.FileConn(f)
		f.Close()
		if err != nil {
			usernsErr = fmt.Errorf("$%s: %v", usernsEnv, err)
			return
		}
		usernsHost = &hostDialer{c: c.(*net.UnixConn)}
		r, err := openRtnl()
		if err != nil {
			usernsErr = err
			return
		}
		defer r.Close()
		if err := r.linkUp(1, 0); err != nil { // lo is the namespace's first device
			usernsErr = fmt.Errorf("loopback: %w", err)
		}
	})
	return usernsHost, usernsErr
}

// proxy is the near side's end of the connections the far side opens to
// the host's servers, when the link runs in a user namespace.
type proxy struct {
	host *hostDialer
	// tcp and udp: the ports bound here for the host; local: until when
	// (Unix ns) a port was found served here, not asked again.
	tcp, udp           [1 << 16]atomic.Bool
	localTCP, localUDP [1 << 16]atomic.Int64

	mu     sync.Mutex
	pre    map[uint16][]net.Conn // dialled for a SYN, for its connection
	open   map[io.Closer]struct{}
	closed bool
}

func newProxy(h *hostDialer) *proxy {
	return &proxy{host: h, pre: map[uint16][]net.Conn{}, open: map[io.Closer]struct{}{}}
}

// hostAddr is where a packet for dst goes on the host: the same loopback
// address, or 127.0.0.1 for the near end's own.
func hostAddr(dst netip.Addr, port uint16) netip.AddrPort {
	if !dst.IsLoopback() {
		dst = netip.AddrFrom4([4]byte{127, 0, 0, 1})
	}
	return netip.AddrPortFrom(dst, port)
}

// see is called by the far-to-near reader for every packet before it is
// admitted: a TCP SYN or a UDP datagram to a port neither served here
// nor bound yet binds it, if the host has a server there (TCP) or in any
// case (UDP).
func (x *proxy) see(p []byte) {
	if len(p) < 20 || p[0]>>4 != 4 {
		return
	}
	ihl := int(p[0]&0x0f) * 4
	if ihl < 20 || len(p) < ihl+8 || p[6]&0x1f != 0 || p[7] != 0 {
		return // not a first fragment: no ports
	}
	port := uint16(p[ihl+2])<<8 | uint16(p[ihl+3])
	dst := netip.AddrFrom4([4]byte(p[16:20]))
	switch p[9] {
	case protoTCP:
		const syn, ack = 0x02, 0x10
		if len(p) < ihl+14 || p[ihl+13]&(syn|ack) != syn || x.tcp[port].Load() {
			return
		}
		if time.Now().UnixNano() < x.localTCP[port].Load() {
			return
		}
		x.bindTCP(dst, port)
	case protoUDP:
		if x.udp[port].Load() || time.Now().UnixNano() < x.localUDP[port].Load() {
			return
		}
		x.bindUDP(port)
	}
}

// localFor is how long a port found served here is not asked again.
const localFor = time.Second

func (x *proxy) track(c io.Closer) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		c.Close()
		return false
	}
	x.open[c] = struct{}{}
	return true
}

func (x *proxy) untrack(c io.Closer) {
	x.mu.Lock()
	delete(x.open, c)
	x.mu.Unlock()
	c.Close()
}

func (x *proxy) bindTCP(dst netip.Addr, port uint16) {
	ln, err := net.ListenTCP("tcp4", &net.TCPAddr{Port: int(port)})
	if err != nil {
		// A server here has it (or it is not ours to take).
		x.localTCP[port].Store(time.Now().Add(localFor).UnixNano())
		return
	}
	hc, err := x.host.dial("tcp", hostAddr(dst, port))
	if err != nil {
		// Nothing listens there either: the SYN is refused here, as
		// it would be there.
		ln.Close()
		return
	}
	x.mu.Lock()
	x.pre[port] = append(x.pre[port], hc)
	x.mu.Unlock()
	if !x.track(ln) {
		return
	}
	x.tcp[port].Store(true)
	go x.serveTCP(ln, port)
}

func (x *proxy) serveTCP(ln *net.TCPListener, port uint16) {
	defer func() {
		x.tcp[port].Store(false)
		x.untrack(ln)
	}()
	for {
		c, err := ln.AcceptTCP()
		if err != nil {
			return
		}
		x.mu.Lock()
		var hc net.Conn
		if q := x.pre[port]; len(q) > 0 {
			hc, x.pre[port] = q[0], q[1:]
		}
		x.mu.Unlock()
		if hc == nil {
			la := c.LocalAddr().(*net.TCPAddr).AddrPort()
			if hc, err = x.host.dial("tcp", hostAddr(la.Addr().Unmap(), port)); err != nil {
				// The server went: this connection is reset, the next
				// SYN refused.
				c.SetLinger(0)
				c.Close()
				return
			}
		}
		go x.splice(c, hc.(*net.TCPConn))
	}
}

// splice carries a connection's bytes both ways, each half closed as the
// other side closes it.
func (x *proxy) splice(a, b *net.TCPConn) {
	if !x.track(a) || !x.track(b) {
		a.Close()
		return
	}
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(b, a)
		b.CloseWrite()
		close(done)
	}()
	_, _ = io.Copy(a, b)
	a.CloseWrite()
	<-done
	x.untrack(a)
	x.untrack(b)
}

// proxyUDPBuffer is the receive buffer asked for the UDP sockets the
// proxy reads, here and on the host (the kernel grants up to
// net.core.rmem_max): a datagram waits there while the proxy's goroutine
// is off its CPU, and one that finds it full is lost beyond the link's
// loss, uncounted. With the default (208 KiB, ~270 small datagrams) a
// 100,000-datagram count at 20k/s across loss=5% lost 5.35% unprivileged
// on a busy 2-CPU VM against the link's 5.11% (254 in a row at once).
const proxyUDPBuffer = 4 << 20

// listenProxyUDP binds the near side's socket for a UDP port of the host.
func listenProxyUDP(port uint16) (*net.UDPConn, error) {
	uc, err := net.ListenUDP("udp4", &net.UDPAddr{Port: int(port)})
	if err != nil {
		return nil, err
	}
	_ = uc.SetReadBuffer(proxyUDPBuffer) // what the kernel grants; less is no failure
	return uc, nil
}

func (x *proxy) bindUDP(port uint16) {
	uc, err := listenProxyUDP(port)
	if err != nil {
		x.localUDP[port].Store(time.Now().Add(localFor).UnixNano())
		return
	}
	if !x.track(uc) {
		return
	}
	x.udp[port].Store(true)
	go x.serveUDP(uc, port)
}

// serveUDP carries the datagrams of each flow (the far side's address
// and port, and the address it sent to) on a socket of its own on the
// host, and the answers back from the address the far side sent to.
func (x *proxy) serveUDP(uc *net.UDPConn, port uint16) {
	defer func() {
		x.udp[port].Store(false)
		x.untrack(uc)
	}()
	pc := ipv4.NewPacketConn(uc)
	if err := pc.SetControlMessage(ipv4.FlagDst, true); err != nil {
		return
	}
	type flow struct {
		src netip.AddrPort
		dst netip.Addr
	}
	flows := map[flow]net.Conn{}
	buf := make([]byte, 1<<16)
	for {
		n, cm, src, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		if cm == nil {
			continue
		}
		sa := src.(*net.UDPAddr).AddrPort()
		dst, _ := netip.AddrFromSlice(cm.Dst.To4())
		f := flow{sa, dst}
		hc := flows[f]
		if hc == nil {
			if hc, err = x.host.dial("udp", hostAddr(dst, port)); err != nil || !x.track(hc) {
				continue
			}
			flows[f] = hc
			go func() {
				defer x.untrack(hc)
				b := make([]byte, 1<<16)
				to := net.UDPAddrFromAddrPort(sa)
				back := &ipv4.ControlMessage{Src: dst.AsSlice()}
				for {
					n, err := hc.Read(b)
					if errors.Is(err, net.ErrClosed) {
						return
					}
					if err != nil {
						continue // ECONNREFUSED from an ICMP error: the server may come
					}
					_, _ = pc.WriteTo(b[:n], back, to)
				}
			}()
		}
		_, _ = hc.Write(buf[:n])
	}
}

// Close closes every socket the proxy opened.
func (x *proxy) Close() {
	x.mu.Lock()
	x.closed = true
	open := x.open
	x.open = nil
	for _, q := range x.pre {
		for _, c := range q {
			c.Close()
		}
	}
	x.mu.Unlock()
	for c := range open {
		c.Close()
	}
}
