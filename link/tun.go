package link

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// offloads are what the relay asks of its TUN devices (vnet.go): TCP and
// UDP super-packets both ways, checksums left partial. Without USO
// (kernels before 6.2) TCP alone; without any, plain packets (each still
// behind a virtio header).
var offloads = []int{
	unix.TUN_F_CSUM | unix.TUN_F_TSO4 | unix.TUN_F_TSO6 | unix.TUN_F_USO4 | unix.TUN_F_USO6,
	unix.TUN_F_CSUM | unix.TUN_F_TSO4 | unix.TUN_F_TSO6,
}

// noUring turns the reader's io_uring multishot read off (ringread.go):
// a read system call a packet, as before it (the benchmarks' comparison).
var noUring bool

// noDirect leaves every write to the writer's thread, as before the
// reader wrote what was due itself (the benchmarks' comparison).
var noDirect bool

// napiTUN opens the devices with IFF_NAPI (a write's packets received
// through NAPI, with GRO): the benchmarks' comparison, not adopted.
var napiTUN bool

// noPumps opens a link without its pumps: the devices and the namespace
// alone, for a benchmark to relay with a program of its own.
var noPumps bool

// noOffload turns the offloads off: the relay as it was, one packet a
// system call (the benchmarks' comparison).
var noOffload bool

// openTUN creates a TUN device (IP packets behind a virtio header, see
// vnet.go) in the namespace of the calling thread, with the offloads the
// kernel grants; uso says whether UDP's is among them. The device lives
// as long as the file: closing it, or the process dying, removes the
// device and its routes.
func openTUN(name string) (fd, index int, uso bool, err error) {
	fd, err = unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return -1, 0, false, fmt.Errorf("open /dev/net/tun: %w", err)
	}
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		unix.Close(fd)
		return -1, 0, false, err
	}
	flags := uint16(unix.IFF_TUN | unix.IFF_NO_PI | unix.IFF_VNET_HDR)
	if napiTUN {
		flags |= unix.IFF_NAPI
	}
	ifr.SetUint16(flags)
	if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
		unix.Close(fd)
		if err == unix.EPERM {
			// Root in a user namespace, over a network namespace not its own.
			return -1, 0, false, fmt.Errorf("%w: create TUN device %s: %v (CAP_NET_ADMIN over this network namespace)", ErrPrivilege, name, err)
		}
		return -1, 0, false, fmt.Errorf("create TUN device %s: %w", name, err)
	}
	if !noOffload {
		for i, o := range offloads {
			if unix.IoctlSetInt(fd, unix.TUNSETOFFLOAD, o) == nil {
				uso = i == 0
				break
			}
		}
	}
	// The interface index, asked of a socket in the same namespace.
	s, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		unix.Close(fd)
		return -1, 0, false, err
	}
	defer unix.Close(s)
	q, _ := unix.NewIfreq(name)
	if err := unix.IoctlIfreq(s, unix.SIOCGIFINDEX, q); err != nil {
		unix.Close(fd)
		return -1, 0, false, fmt.Errorf("index of %s: %w", name, err)
	}
	// Non-blocking: the pumps read until EAGAIN, then poll.
	return fd, int(q.Uint32()), uso, nil
}
