package study

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// testServerEnv makes the test binary a tiny HTTP server instead of running
// the tests: the end-to-end study uses it as the two servers it compares,
// which is cheaper than building one.
const testServerEnv = "WIREBENCH_STUDY_TESTSERVER"

func TestMain(m *testing.M) {
	if os.Getenv(testGRPCServerEnv) != "" { // loadgrpc_test.go
		if err := testGRPCServer(os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, "test gRPC server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if os.Getenv(testServerEnv) != "" {
		if err := testServer(os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, "test server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// testServer answers every request with "ok", after spinning the CPU for
// -burn (a known CPU cost per response) and holding -ballast MiB of
// touched memory (a known RSS, to tell the processes apart).
func testServer(args []string) error {
	fs := flag.NewFlagSet("testserver", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	burn := fs.Duration("burn", 0, "CPU time to spin per response")
	ballast := fs.Int("ballast", 0, "MiB of memory to hold")
	exitAfter := fs.Duration("exit-after", 0, "exit with status 3 after this long (a crashing server)")
	burnFile := fs.String("burn-file", "", "read -burn from this file (relative to the working directory: a rev's checkout)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *burnFile != "" {
		b, err := os.ReadFile(*burnFile)
		if err != nil {
			return err
		}
		if *burn, err = time.ParseDuration(strings.TrimSpace(string(b))); err != nil {
			return err
		}
	}
	mem := make([]byte, *ballast<<20)
	for i := range mem { // touch every page, so it counts in RSS
		mem[i] = byte(i)
	}
	if *exitAfter > 0 {
		time.AfterFunc(*exitAfter, func() { os.Exit(3) })
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	return http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if *burn > 0 {
			spinCPU(*burn)
		}
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "ok %d\n", len(mem))
	}))
}

// spinCPU spins until this thread has used d of CPU time — CPU, not wall
// time: under a CPU quota a wall-clock spin is throttled part of the way
// and finishes on less CPU than it claims (580/s served at "1 ms" under a
// quota of half a CPU).
func spinCPU(d time.Duration) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	for end := ts.Nano() + d.Nanoseconds(); ts.Nano() < end; {
		_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	}
}
