package servercpu

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/server"
	"github.com/wirebench/wirebench/store"
)

// childEnv names the server a re-executed test binary runs instead of the
// tests: "bare" (BareHandler), "barefast" (BareFastHandler), or a REST
// engine of `wirebench serve`.
const childEnv = "WIREBENCH_SERVERCPU_CHILD"

func TestMain(m *testing.M) {
	if name := os.Getenv(childEnv); name != "" {
		if err := runChild(name); err != nil {
			fmt.Fprintln(os.Stderr, "servercpu child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runChild serves name on a free loopback port, prints "listening
// http=ADDR", then answers each line on stdin with its own CPU time (user
// plus system, ns, from getrusage) until stdin closes. Pinned to the CPU in
// WIREBENCH_SERVERCPU_CPU when set, as `taskset -c 1` pins the judged
// servers (Go then runs one P, as there).
func runChild(name string) error {
	if c := os.Getenv("WIREBENCH_SERVERCPU_CPU"); c != "" {
		cpu, err := strconv.Atoi(c)
		if err != nil {
			return fmt.Errorf("WIREBENCH_SERVERCPU_CPU=%q: %w", c, err)
		}
		if err := measure.Pin([]int{cpu}); err != nil {
			return err
		}
	}
	var addr string
	switch name {
	case "bare", "barefast":
		st := store.NewMemory(store.Options{})
		if err := st.Seed(server.DefaultSeedUsers, 0); err != nil {
			return err
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		if name == "barefast" {
			go func() { _ = fasthttp.Serve(ln, BareFastHandler(st.ListUsers())) }()
		} else {
			go func() { _ = http.Serve(ln, BareHandler(st.ListUsers())) }()
		}
		addr = ln.Addr().String()
	default:
		// What `wirebench serve --no-grpc --engine NAME` runs, defaults
		// included.
		s, err := server.Start(context.Background(), server.Options{
			HTTPAddr: "127.0.0.1:0", NoGRPC: true, Engine: name,
			SeedUsers: server.DefaultSeedUsers, SeedTodos: server.DefaultSeedTodos,
		})
		if err != nil {
			return err
		}
		defer s.Close()
		addr = s.HTTPAddr()
	}
	// WIREBENCH_SERVERCPU_PROFILE names a file for a CPU profile of the
	// child's whole life (to find where a server's time goes: run the child
	// by hand under wrk, then `go tool pprof`); never on in the benchmark.
	if path := os.Getenv("WIREBENCH_SERVERCPU_PROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("cpu profile: %w", err)
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	// WIREBENCH_SERVERCPU_ALLOCS names a file for an allocation profile
	// (every 512th byte sampled) written when the child ends.
	if path := os.Getenv("WIREBENCH_SERVERCPU_ALLOCS"); path != "" {
		runtime.MemProfileRate = 512
		defer func() {
			if f, err := os.Create(path); err == nil {
				_ = pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
		}()
	}
	fmt.Printf("listening http=%s\n", addr)
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		u, s := measure.SelfCPU()
		fmt.Printf("%d\n", (u + s).Nanoseconds())
	}
	return sc.Err()
}

// child is a server process under measurement.
type child struct {
	name string
	addr string
	cmd  *exec.Cmd
	in   *bufio.Writer
	out  *bufio.Scanner
}

// startChild re-executes the test binary as server name, pinned to
// serverCPU (-1: not pinned).
func startChild(tb testing.TB, name string, serverCPU int) *child {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+name)
	if serverCPU >= 0 {
		cmd.Env = append(cmd.Env, "WIREBENCH_SERVERCPU_CPU="+strconv.Itoa(serverCPU))
	}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	c := &child{name: name, cmd: cmd, in: bufio.NewWriter(stdin), out: bufio.NewScanner(stdout)}
	tb.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	if !c.out.Scan() {
		tb.Fatalf("%s: no address: %v", name, c.out.Err())
	}
	addr, ok := strings.CutPrefix(c.out.Text(), "listening http=")
	if !ok {
		tb.Fatalf("%s: %q, want the listening line", name, c.out.Text())
	}
	c.addr = addr
	return c
}

// cpu is the child's CPU time so far.
func (c *child) cpu(tb testing.TB) time.Duration {
	tb.Helper()
	c.in.WriteString("cpu\n")
	if err := c.in.Flush(); err != nil {
		tb.Fatalf("%s: %v", c.name, err)
	}
	if !c.out.Scan() {
		tb.Fatalf("%s: no CPU reading: %v", c.name, c.out.Err())
	}
	ns, err := strconv.ParseInt(c.out.Text(), 10, 64)
	if err != nil {
		tb.Fatalf("%s: CPU reading %q: %v", c.name, c.out.Text(), err)
	}
	return time.Duration(ns)
}
