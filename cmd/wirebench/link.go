package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/wirebench/wirebench/link"
	"github.com/wirebench/wirebench/results"
)

func init() {
	register("link", command{
		summary: "run a command across an emulated network link (delay, rate, jitter, loss), as Mahimahi's shells do",
		run:     runLink,
	})
}

const linkUsage = `SPEC [flags] -- COMMAND [ARG...]

Runs COMMAND on the far side of an emulated link: in a network namespace
whose only route is the link, to this machine's loopback. Inside, 127.0.0.1
(and $WIREBENCH_LINK_HOST, the near side's own address) reaches servers
listening here on 127.0.0.1, through the link's delay, rate and loss; both
ends run the kernel's own TCP and QUIC. SPEC is as --link's:
rtt=80ms,rate=2mbit,loss=1% or a preset (` + "`wirebench link presets`" + ` lists them).
Needs root, or a kernel that allows unprivileged user namespaces (then it
runs in namespaces of its own). Exit status: COMMAND's, or 2 for bad usage
or missing privileges.`

func runLink(ctx context.Context, env *cliEnv, args []string) error {
	var lf linkFlags
	fs := newFlagSet(env, "link", linkUsage)
	lf.registerChecks(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	pos := fs.Args()
	if len(pos) == 1 && pos[0] == "presets" {
		for _, n := range link.PresetNames() {
			s, _ := link.Parse(n)
			fmt.Fprintf(env.stdout, "%-14s %s\n  %s\n", n, s, link.PresetSource(n))
		}
		return nil
	}
	if len(pos) < 2 || fs.ArgsLenAtDash() != 1 {
		return usagef("want SPEC -- COMMAND [ARG...]")
	}
	lf.spec = pos[0]
	if strings.TrimSpace(lf.spec) == "" {
		// Parse reads "" as no link; here it is more likely an unset
		// variable ("$SPEC") than a wish to run on loopback.
		return usagef("an empty SPEC: write none to run COMMAND without a link")
	}
	if s, err := link.Parse(lf.spec); err == nil && s == nil {
		// none: no link at all, the command as it is (rtt=0 is the relay
		// with nothing emulated).
		cmd := exec.Command(pos[1], pos[2:]...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = env.stdin, env.stdout, env.stderr
		return exitCode(cmd.Run())
	}
	l, rl, err := lf.open(ctx, env)
	if err != nil {
		return err
	}
	defer l.Close()
	results.WriteLinkSummary(env.stderr, rl)
	cmd := exec.Command(pos[1], pos[2:]...)
	// The command shares the terminal's process group: Ctrl-C reaches it
	// from the terminal, and only SIGTERM sent to us is passed on.
	return lf.runCommand(ctx, env, l, cmd, false, nil)
}

// linkResultEnv carries the link (spec and calibration, JSON) to the
// process re-executed on its far side, which records it in its result.
// linkRelayEnv names that process's descriptor of a socket to the one
// that runs the relay, which answers each "relay WALL" line on it (WALL:
// how long the run took, ns) with the relay's figures over the run so
// far (results.LinkRelay, a JSON line): the far side writes them into
// its result, as a study's trials hold them.
const (
	linkResultEnv = "WIREBENCH_LINK_RESULT"
	linkRelayEnv  = "WIREBENCH_LINK_RELAY_FD"
)

// linkFlags are --link and its companions on load and capacity.
type linkFlags struct {
	spec      string
	calibrate bool
	check     bool
	// result is the link this process runs across: set on the far side,
	// and relay the socket that asks for the relay's figures (nil when
	// none was handed over).
	result *results.Link
	relay  net.Conn
}

func (f *linkFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.spec, "link", "", "run the client across an emulated network `SPEC`: rtt=80ms,rate=2mbit,loss=1%, or a preset (3g, 4g, lte, lte-lossy, satellite, transatlantic, datacenter; wirebench link presets); needs root or unprivileged user namespaces; the server stays here, on 127.0.0.1 (docs/network.md)")
	f.registerChecks(fs)
}

func (f *linkFlags) registerChecks(fs *pflag.FlagSet) {
	fs.BoolVar(&f.calibrate, "link-calibrate", true, "--link: measure the link (round trips, bulk rate each way, loss) before the run and record it beside the spec")
	fs.BoolVar(&f.check, "link-check", true, "--link: fail when the link measured is off its spec beyond the tolerances")
}

// across runs the command (name, args as given) again on the far side of
// the link when --link is given and this process is not that run yet:
// done is then true and err the run's. On the far side, and without
// --link, it does nothing and the command runs as usual.
func (f *linkFlags) across(ctx context.Context, env *cliEnv, name string, args []string) (done bool, err error) {
	if f.spec == "" {
		return false, nil
	}
	if s, err := link.Parse(f.spec); err == nil && s == nil {
		f.spec = "" // none: over loopback, as without --link
		return false, nil
	}
	inside, err := f.inside()
	if err != nil || inside {
		return err != nil, err
	}
	return true, f.through(ctx, env, name, args)
}

// linkExe is the program re-executed on the far side: this one (tests
// point it at a built wirebench).
var linkExe = os.Executable

// inside reads the link this process was re-executed across, if any: it
// then runs as usual and records the link in its result.
func (f *linkFlags) inside() (bool, error) {
	v := os.Getenv(linkResultEnv)
	if f.spec == "" || v == "" {
		return false, nil
	}
	f.result = &results.Link{}
	if err := json.Unmarshal([]byte(v), f.result); err != nil {
		return false, fmt.Errorf("$%s: %v", linkResultEnv, err)
	}
	if v := os.Getenv(linkRelayEnv); v != "" {
		os.Unsetenv(linkRelayEnv) // descriptor 3 of what this process starts is another file
		fd, err := strconv.Atoi(v)
		if err != nil || fd < 3 {
			return false, fmt.Errorf("$%s=%q: want a file descriptor", linkRelayEnv, v)
		}
		// FileConn dups it close-on-exec: what this process starts does
		// not inherit it.
		file := os.NewFile(uintptr(fd), "link relay")
		f.relay, err = net.FileConn(file)
		file.Close()
		if err != nil {
			return false, fmt.Errorf("$%s: %w", linkRelayEnv, err)
		}
	}
	return true, nil
}

// runResult is the link for the result of a run that took wall: on the
// far side, with the relay's figures over the run so far, asked of the
// process that runs the relay; nil without --link. Without those
// figures (a process started by hand with the environment, a relay
// gone) it says so on w and records the link without them.
func (f *linkFlags) runResult(w io.Writer, wall time.Duration) *results.Link {
	if f.result == nil || f.relay == nil {
		return f.result
	}
	r, err := askRelay(f.relay, wall)
	if err != nil {
		fmt.Fprintf(w, "link: the relay's figures for the run: %v; the result has none\n", err)
		return f.result
	}
	l := *f.result
	l.Relay = r
	return &l
}

// askRelay asks the process that runs the relay for its figures over a
// run that took wall.
func askRelay(c net.Conn, wall time.Duration) (*results.LinkRelay, error) {
	// A guard, not a measurement: the answer is a read of counters.
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := fmt.Fprintf(c, "relay %d\n", wall); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(c).ReadBytes('\n')
	if err != nil {
		return nil, err
	}
	var r results.LinkRelay
	if err := json.Unmarshal(line, &r); err != nil {
		return nil, fmt.Errorf("its answer %q: %w", line, err)
	}
	return &r, nil
}

// serveRelay answers each "relay WALL" line read from c with
// figures(WALL) as a JSON line, until c ends; asked is set once it has
// answered.
func serveRelay(c io.ReadWriter, figures func(wall time.Duration) *results.LinkRelay, asked *atomic.Bool) {
	sc := bufio.NewScanner(c)
	for sc.Scan() {
		v, ok := strings.CutPrefix(sc.Text(), "relay ")
		wall, err := strconv.ParseInt(v, 10, 64)
		if !ok || err != nil {
			return
		}
		b, err := json.Marshal(figures(time.Duration(wall)))
		if err != nil {
			return
		}
		// Set before the answer, which the far side may print and exit
		// on before this goroutine runs again.
		asked.Store(true)
		if _, err := c.Write(append(b, '\n')); err != nil {
			asked.Store(false) // it did not get them: they are printed here
			return
		}
	}
}

// open sets up and calibrates the link. Missing privileges are exit 2,
// with what is missing; a link off its spec is exit 1 unless --link-check=false.
func (f *linkFlags) open(ctx context.Context, env *cliEnv) (*link.Link, *results.Link, error) {
	spec, err := link.Parse(f.spec)
	if err != nil {
		return nil, nil, usagef("--link: %s", linkMessage(err))
	}
	if spec == nil { // none: callers run without a link; here, the relay alone
		spec = &link.Spec{}
	}
	l, err := link.Open(*spec)
	if done, err := retryUnprivileged(ctx, env, err, "--link"); done {
		return nil, nil, err
	}
	if errors.Is(err, link.ErrPrivilege) {
		return nil, nil, exitError{2, fmt.Errorf("--link: %s: run as root (sudo), or in a container with CAP_NET_ADMIN and CAP_SYS_ADMIN and /dev/net/tun", linkMessage(err))}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("--link: %w", err)
	}
	rl := &results.Link{Spec: f.spec, Effective: spec.String(), Preset: spec.Preset, Source: link.PresetSource(spec.Preset)}
	if f.calibrate {
		fmt.Fprintf(env.stderr, "link %s: calibrating…\n", rl.Effective)
		if rl.Calibration, err = l.Calibrate(ctx, link.CalibrateOptions{}); err != nil {
			l.Close()
			return nil, nil, fmt.Errorf("--link: %w", err)
		}
		if rl.Calibration.Off != "" && f.check {
			results.WriteLinkSummary(env.stderr, rl)
			l.Close()
			return nil, nil, fmt.Errorf("--link: the link measured is off its spec: %s (--link-check=false runs anyway, recording it)", rl.Calibration.Off)
		}
	}
	return l, rl, nil
}

// retryUnprivileged: when err says that the link needs privileges this
// process lacks, this command line runs again in user and network
// namespaces of its own, where the kernel allows them (done, and its
// exit), or one line says what is missing (done, exit 2). Otherwise not
// done.
func retryUnprivileged(ctx context.Context, env *cliEnv, err error, flag string) (bool, error) {
	if !errors.Is(err, link.ErrPrivilege) || link.InUserns() || testing.Testing() {
		return false, nil
	}
	if err = unprivileged(ctx, env); !errors.Is(err, link.ErrPrivilege) {
		return true, err
	}
	return true, exitError{2, fmt.Errorf("%s: %s", flag, linkMessage(err))}
}

// unprivileged runs this command line again in user and network
// namespaces of its own (link.StartInUserns), passes SIGTERM on (Ctrl-C
// reaches it from the terminal), and exits as it does; an
// link.ErrPrivilege error when the kernel refuses the namespaces.
func unprivileged(ctx context.Context, env *cliEnv) error {
	exe, err := linkExe()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe, os.Args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = env.stdin, env.stdout, env.stderr
	// Every signal is passed on unless a terminal's Ctrl-C reached the
	// inner process too (it shares our group); the inner one ends its
	// command on the first and kills it on the second.
	terminal := ctrlCReachesGroup()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if err := link.StartInUserns(cmd); err != nil {
		return err
	}
	// Two of one signal passed on back to back can reach the inner process
	// as one: a signal still pending absorbs its repeat, in the kernel and
	// in Go's runtime. The inner one counts SIGINT and SIGTERM alike, so a
	// repeat goes on as the other of the two and is counted.
	var last syscall.Signal
	pass := func(sig syscall.Signal) {
		if sig == last {
			sig = map[syscall.Signal]syscall.Signal{syscall.SIGINT: syscall.SIGTERM, syscall.SIGTERM: syscall.SIGINT}[sig]
		}
		cmd.Process.Signal(sig)
		last = sig
	}
	if sig, ok := interruption(ctx); ok && len(sigs) == 0 && (sig.sig == syscall.SIGTERM || !terminal) {
		pass(sig.sig) // one that came before Notify
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	for done := false; !done; {
		select {
		case err = <-waited:
			done = true
		case sig := <-sigs:
			if sig == syscall.SIGTERM || !terminal {
				pass(sig.(syscall.Signal))
			}
		}
	}
	if err = exitCode(err); err == nil {
		err = quietExit(0)
	}
	return err
}

// through runs this command again (name, args as given) on the far side
// of the link, and exits as it does.
func (f *linkFlags) through(ctx context.Context, env *cliEnv, name string, args []string) error {
	l, rl, err := f.open(ctx, env)
	if err != nil {
		return err
	}
	defer l.Close()
	exe, err := linkExe()
	if err != nil {
		return err
	}
	js, err := json.Marshal(rl)
	if err != nil {
		return err
	}
	cmd := exec.Command(exe, append([]string{name}, args...)...)
	cmd.Env = append(os.Environ(), linkResultEnv+"="+string(js), linkRelayEnv+"=3")
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("--link: a socket for the relay's figures: %w", err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "link relay"), os.NewFile(uintptr(fds[1]), "link relay (far side)")
	defer ours.Close()
	cmd.ExtraFiles = []*os.File{theirs} // its descriptor 3
	return f.runCommand(ctx, env, l, cmd, true, ours)
}

// runCommand runs cmd on the far side, wired to env, passes a signal that
// ended ctx on (every one when own, the command in its own process group;
// else SIGTERM only: the terminal sends Ctrl-C to the whole group), and
// prints what the relay did unless the command asked for it on relay
// (cmd.ExtraFiles holds the other end: closed here once it started) to
// print it with its result. A non-zero exit is the command's, silently.
func (f *linkFlags) runCommand(ctx context.Context, env *cliEnv, l *link.Link, cmd *exec.Cmd, own bool, relay *os.File) error {
	cmd.Stdin, cmd.Stdout, cmd.Stderr = env.stdin, env.stdout, env.stderr
	// Without a terminal whose Ctrl-C reaches the command (a background
	// job, a supervisor), the command gets a process group of its own and
	// signals are passed on to all of it: a shell's children too.
	group := !own && !ctrlCReachesGroup()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: own || group}
	signalCmd := func(sig syscall.Signal) {
		if group {
			syscall.Kill(-cmd.Process.Pid, sig)
			return
		}
		cmd.Process.Signal(sig)
	}
	st0, t0 := l.Stats(), time.Now()
	// Signals are watched while the command runs: the second one kills
	// it (and so ends the link), whatever the first did — also when this
	// process was started with SIGINT ignored (a shell's background job),
	// where the second would otherwise be lost.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	err := l.Start(cmd)
	for _, x := range cmd.ExtraFiles {
		x.Close() // the command's now
	}
	if err != nil {
		return fmt.Errorf("--link: starting %s: %w", cmd.Path, err)
	}
	var asked atomic.Bool
	if relay != nil {
		// The relay's share of a CPU is taken over the run's own time
		// when it says one: a run that waited for --start-at or sat in
		// a long set-up had an idle relay meanwhile, which would hide
		// a busy one.
		go serveRelay(relay, func(wall time.Duration) *results.LinkRelay {
			if wall <= 0 {
				wall = time.Since(t0)
			}
			return l.Stats().Since(st0).Result(l.Spec, min(wall, time.Since(t0)))
		}, &asked)
	}
	stop := context.AfterFunc(ctx, func() {
		// A terminal's Ctrl-C reaches the command itself when it shares
		// the terminal's foreground group with us.
		if sig, ok := interruption(ctx); ok && (own || group || sig.sig == syscall.SIGTERM) {
			signalCmd(sig.sig)
		}
	})
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	seen := 0
	if ctx.Err() != nil && len(sigs) == 0 {
		seen = 1 // the first came before Notify
	}
	for done := false; !done; {
		select {
		case err = <-waited:
			done = true
		case <-sigs:
			if seen++; seen >= 2 {
				signalCmd(syscall.SIGKILL)
			}
		}
	}
	stop()
	if seen < 2 {
		l.Drain(3 * time.Second) // what the command sent last still arrives
	}
	if asked.Load() {
		return exitCode(err) // the command printed them with its result
	}
	st := l.Stats().Since(st0)
	writeRelayStats(env.stderr, st)
	if why := st.RelayLimited(l.Spec, time.Since(t0)); why != "" {
		fmt.Fprintf(env.stderr, "  link relay: WARNING: the relay, not the emulated link, was the limit (%s): the figures measure this machine's relay\n", why)
	}
	return exitCode(err)
}

// ctrlCReachesGroup: this process's group is the foreground group of its
// controlling terminal, so a Ctrl-C there reached every process of it.
func ctrlCReachesGroup() bool {
	tty, err := os.Open("/dev/tty")
	if err != nil {
		return false // no controlling terminal
	}
	defer tty.Close()
	pgrp, err := unix.IoctlGetInt(int(tty.Fd()), unix.TIOCGPGRP)
	return err == nil && pgrp == unix.Getpgrp()
}

// exitCode turns a command's exit into ours, silently: its code, or
// 128+n when a signal killed it.
func exitCode(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code := ee.ExitCode()
		if code < 0 { // killed by a signal
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				code = 128 + int(ws.Signal())
			}
		}
		return quietExit(code)
	}
	return err
}

func writeRelayStats(w io.Writer, s link.Stats) {
	fmt.Fprintf(w, "  link relay (the run): up %d packets (%d lost, %d queue drops), down %d (%d lost, %d queue drops); dropped by the kernel before the relay read them: %d up, %d down; %v CPU per packet, sent %v late on average (worst %v)\n",
		s.Up.Packets, s.Up.Lost, s.Up.QueueDrops, s.Down.Packets, s.Down.Lost, s.Down.QueueDrops, s.KernelDropsUp, s.KernelDropsDown,
		s.CPUPerPacket.Round(100*time.Nanosecond), s.Late.Round(time.Microsecond), s.LateMax.Round(time.Microsecond))
}

// linkMessage drops the library's "link: invalid spec: " prefix, which
// the CLI's own prefixes would double.
func linkMessage(err error) string {
	m := err.Error()
	for _, p := range []string{link.ErrSpec.Error() + ": ", "link: "} {
		if len(m) > len(p) && m[:len(p)] == p {
			return m[len(p):]
		}
	}
	return m
}

// quietExit ends the command with a code and no message: the child it
// ran has said what there was to say.
type quietExit int

func (e quietExit) Error() string { return fmt.Sprintf("exit status %d", int(e)) }
func (e quietExit) ExitCode() int { return int(e) }
