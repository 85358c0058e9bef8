package link

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A command on the far side may start processes of its own (a shell's
// `&`, a daemon) that outlive it: the kernel's parent-death signal reaches
// the command only. Those are ended with the link by a reaper: this
// program again, started beside the first command, that waits for its
// parent-death signal (SIGTERM, which it catches) and then kills every
// process in the far side's network namespace. The signal comes when this
// process dies, SIGKILL included, or when Close ends the thread that
// started the reaper.

// reaperEnv names the far namespace ("dev:ino") for the reaper and the
// PID of the process it watches.
const reaperEnv = "WIREBENCH_LINK_REAPER"

func init() {
	if v := os.Getenv(reaperEnv); v != "" {
		os.Exit(runReaper(v))
	}
}

// startReaper starts the link's reaper, once. It is forked from a thread
// locked to a goroutine that waits for Close and then returns still
// locked: the runtime ends such a thread, and the reaper's parent-death
// signal follows (it is the forking thread's death, not the process's).
func (l *Link) startReaper() error {
	l.reaperOnce.Do(func() {
		var st unix.Stat_t
		if err := unix.Fstat(l.ns.fd, &st); err != nil {
			l.reaperErr = err
			return
		}
		l.reaperStop = make(chan struct{})
		started := make(chan error, 1)
		go func() {
			runtime.LockOSThread() // never unlocked: see above
			cmd := exec.Command("/proc/self/exe")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d:%d:%d", reaperEnv, st.Dev, st.Ino, os.Getpid()))
			// Its own group: a terminal's Ctrl-C, or a kill of this
			// process's group, does not end it before it reaps.
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
			// It says when it catches SIGTERM: before, the signal would
			// end it at once, so no command starts until then.
			ready, err := cmd.StdoutPipe()
			if err == nil {
				err = cmd.Start()
			}
			if err == nil {
				l.reaper = cmd
				err = readyWithin(ready, 10*time.Second)
			}
			started <- err
			if err != nil && l.reaper == nil {
				runtime.UnlockOSThread()
				return
			}
			<-l.reaperStop
		}()
		l.reaperErr = <-started
	})
	return l.reaperErr
}

// readyWithin waits for the reaper's line saying it is ready.
func readyWithin(r io.Reader, d time.Duration) error {
	got := make(chan error, 1)
	go func() {
		b := make([]byte, 6)
		_, err := io.ReadFull(r, b)
		if err == nil && string(b) != "ready\n" {
			err = fmt.Errorf("it said %q", b)
		}
		got <- err
	}()
	select {
	case err := <-got:
		return err
	case <-time.After(d):
		return fmt.Errorf("not ready in %v", d)
	}
}

// stopReaper has the reaper kill what is left on the far side and waits
// for it (a few seconds at most).
func (l *Link) stopReaper() {
	if l.reaperStop == nil {
		return
	}
	close(l.reaperStop)
	if l.reaper == nil {
		return
	}
	done := make(chan struct{})
	go func() { l.reaper.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
}

// runReaper is the reaper's whole life: wait for the parent-death signal
// (or find the parent gone already), then kill every process whose
// network namespace is the far side's, until none is left.
func runReaper(v string) int {
	var dev, ino uint64
	var parent int
	if _, err := fmt.Sscanf(v, "%d:%d:%d", &dev, &ino, &parent); err != nil {
		fmt.Fprintf(os.Stderr, "wirebench: link reaper: bad %s %q\n", reaperEnv, v)
		return 2
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	signal.Ignore(syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE)
	os.Stdout.WriteString("ready\n")
	os.Stdout.Close()
	if os.Getppid() == parent {
		<-term
	} // else the parent died before the signal could be caught
	for pass := 0; pass < 500; pass++ {
		if killNamespace(dev, ino) == 0 {
			return 0
		}
		time.Sleep(10 * time.Millisecond) // a fork in flight shows up on the next pass
	}
	return 1
}

// killNamespace sends SIGKILL to every process whose network namespace
// is dev:ino and returns how many it found.
func killNamespace(dev, ino uint64) int {
	d, err := os.Open("/proc")
	if err != nil {
		return 0
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	self := os.Getpid()
	n := 0
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid == self {
			continue
		}
		var st unix.Stat_t
		if unix.Stat("/proc/"+name+"/ns/net", &st) != nil || uint64(st.Dev) != dev || st.Ino != ino {
			continue
		}
		if unix.Kill(pid, unix.SIGKILL) == nil {
			n++
		}
	}
	return n
}
