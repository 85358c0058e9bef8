package link

import (
	"net"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// stampArrivals asks the kernel to stamp each datagram c receives with
// its arrival (SO_TIMESTAMPING, software receive stamps: when the relay's
// write delivered it), so that a reader held back by a busy machine does
// not move the arrivals it measures. A datagram the kernel did not stamp
// (refused, or received before the kernel's stamping was switched on:
// the first socket to ask switches it on a moment later, from a work
// queue) is timed by its read, as without.
func stampArrivals(c *net.UDPConn) {
	if rc, err := c.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) {
			_ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPING,
				unix.SOF_TIMESTAMPING_RX_SOFTWARE|unix.SOF_TIMESTAMPING_SOFTWARE)
		})
	}
}

// readStamped reads a datagram into b and says when it arrived, and
// whether that is the kernel's stamp (stampArrivals) or the time of the
// read. oob holds the stamp (128 bytes are room enough).
func readStamped(c *net.UDPConn, b, oob []byte) (int, time.Time, bool, error) {
	n, oobn, _, _, err := c.ReadMsgUDP(b, oob)
	now := time.Now()
	if err != nil {
		return n, now, false, err
	}
	msgs, _ := unix.ParseSocketControlMessage(oob[:oobn])
	for _, m := range msgs {
		// scm_timestamping: three timespecs, the first the software stamp.
		if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SO_TIMESTAMPING && len(m.Data) >= int(unsafe.Sizeof(unix.Timespec{})) {
			ts := (*unix.Timespec)(unsafe.Pointer(&m.Data[0]))
			if ts.Sec != 0 || ts.Nsec != 0 {
				return n, time.Unix(ts.Unix()), true, nil
			}
		}
	}
	return n, now, false, nil
}
