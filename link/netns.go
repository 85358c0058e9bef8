package link

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// netns is a network namespace of our own, held by a file descriptor
// only (never bind-mounted under /var/run/netns): it goes when the
// descriptor is closed or the process dies, and with it everything in it.
type netns struct{ fd int }

// newNetns creates an empty network namespace (its loopback down).
func newNetns() (*netns, error) {
	var ns *netns
	err := inThread(func() error {
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("%w: unshare(CLONE_NEWNET): %v", ErrPrivilege, err)
		}
		fd, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		ns = &netns{fd: fd}
		return nil
	})
	return ns, err
}

// Do runs f on an OS thread inside the namespace: sockets, devices and
// routes f creates are the namespace's; child processes started by f
// (os/exec forks from the calling thread) run in it too.
func (n *netns) Do(f func() error) error {
	return inThread(func() error {
		if err := unix.Setns(n.fd, unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("setns: %w", err)
		}
		return f()
	})
}

func (n *netns) Close() error { return unix.Close(n.fd) }

// inThread runs f on a locked OS thread and puts the thread back in the
// namespace it started in; a thread that cannot be put back is never
// unlocked, so the runtime ends it with the goroutine instead of reusing it.
func inThread(f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer unix.Close(orig)
		err = f()
		if e := unix.Setns(orig, unix.CLONE_NEWNET); e != nil {
			// Without CAP_SYS_ADMIN both fail: f's error (an unshare
			// refused: ErrPrivilege) says why, this one does not.
			// Alone, it is the privilege still missing: root of a user
			// namespace that does not own the original one (unshare -r, a
			// rootless container) makes a namespace it cannot leave.
			if err == nil {
				err = fmt.Errorf("%w: back to the original network namespace: %v (CAP_SYS_ADMIN over it)", ErrPrivilege, e)
			}
			errc <- err
			return // still locked: the thread exits with this goroutine
		}
		runtime.UnlockOSThread()
		errc <- err
	}()
	return <-errc
}
