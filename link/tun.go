package link

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// openTUN creates a TUN device (IP packets, no packet-info header) in the
// namespace of the calling thread. The device lives as long as the file:
// closing it, or the process dying, removes the device and its routes.
func openTUN(name string) (fd, index int, err error) {
	fd, err = unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return -1, 0, fmt.Errorf("open /dev/net/tun: %w", err)
	}
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		unix.Close(fd)
		return -1, 0, err
	}
	ifr.SetUint16(unix.IFF_TUN | unix.IFF_NO_PI)
	if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
		unix.Close(fd)
		return -1, 0, fmt.Errorf("create TUN device %s: %w", name, err)
	}
	// The interface index, asked of a socket in the same namespace.
	s, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		unix.Close(fd)
		return -1, 0, err
	}
	defer unix.Close(s)
	q, _ := unix.NewIfreq(name)
	if err := unix.IoctlIfreq(s, unix.SIOCGIFINDEX, q); err != nil {
		unix.Close(fd)
		return -1, 0, fmt.Errorf("index of %s: %w", name, err)
	}
	// Non-blocking: the pumps read until EAGAIN, then poll.
	return fd, int(q.Uint32()), nil
}
