package idleread

import (
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	// The tests set busy themselves: no sampler of the real CPU use.
	samplerOnce.Do(func() {})
	os.Exit(m.Run())
}

// pair is a loopback TCP connection: the server's end and the client's.
func pair(t *testing.T) (srv, cli net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cli, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	srv, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(); cli.Close() })
	return srv, cli
}

// Reads yield as their mode says, and return what the connection holds
// either way: never; always; in mode others, when other connections'
// requests were read since the Reader's own last read began.
func TestYieldsByMode(t *testing.T) {
	defer mode.Store(never)
	reads.Store(0)
	const n = 50
	var rs [2]Reader
	for i := range rs {
		srv, cli := pair(t)
		rs[i].Init(srv)
		if _, err := cli.Write(make([]byte, 8*n)); err != nil {
			t.Fatal(err)
		}
	}
	buf := make([]byte, 1)
	yields := func() uint64 { return rs[0].Yields() + rs[1].Yields() }
	for _, c := range []struct {
		what  string
		mode  int32
		alone bool   // rs[0] reads n times, else rs[0] and rs[1] alternate
		want  uint64 // yields
	}{
		{"never, two connections", never, false, 0},
		{"always, two connections", always, false, 2 * n},
		{"always, one connection", always, true, n},
		{"others, two connections", others, false, 2*n - 2}, // each read follows the other's, but the first two
		{"others, one connection", others, true, 1},         // only the first follows the other's
		{"never, one connection", never, true, 0},
	} {
		mode.Store(c.mode)
		before := yields()
		for i := range n {
			for j := range rs {
				if j > 0 && c.alone {
					break
				}
				if k, err := rs[j].Read(buf); k != 1 || err != nil {
					t.Fatalf("%s, read %d of reader %d: %d bytes, %v", c.what, i, j, k, err)
				}
			}
		}
		if got := yields() - before; got != c.want {
			t.Errorf("%s: %d yields, want %d", c.what, got, c.want)
		}
	}
}

// The errors are the connection's: a deadline, end of stream, closed; the
// zero Reader fails instead of panicking.
func TestErrorsAreTheConnections(t *testing.T) {
	defer mode.Store(never)
	mode.Store(others)
	srv, cli := pair(t)
	var r Reader
	r.Init(srv)
	buf := make([]byte, 8)
	srv.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if _, err := r.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("past the deadline: %v", err)
	}
	srv.SetReadDeadline(time.Time{})
	cli.Close()
	if _, err := r.Read(buf); err != io.EOF {
		t.Fatalf("after the client closed: %v, want io.EOF", err)
	}
	srv.Close()
	if _, err := r.Read(buf); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("on a closed connection: %v, want net.ErrClosed", err)
	}
	var zero Reader
	if _, err := zero.Read(buf); err == nil {
		t.Error("the zero Reader read without a connection")
	}
}

func TestModeOf(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		used, wall  time.Duration
		procs, cpus int
		want        int32
	}{
		{95 * ms, 100 * ms, 2, 2, never},
		{60 * ms, 100 * ms, 1, 2, always}, // one P: always
		{0, 100 * ms, 1, 1, always},
		{180 * ms, 100 * ms, 2, 2, always}, // busyShare exactly
		{179 * ms, 100 * ms, 2, 2, never},
		{190 * ms, 100 * ms, 2, 4, always},
		{150 * ms, 100 * ms, 2, 2, never}, // one of two processors idle half the time
		{30 * ms, 100 * ms, 2, 2, never},  // a server at c=1
		{720 * ms, 100 * ms, 8, 8, always},
		{700 * ms, 100 * ms, 8, 8, never},
		{350 * ms, 100 * ms, 8, 4, never},
		{360 * ms, 100 * ms, 8, 4, always}, // busyShare of the 4 CPUs, not of the 8 Ps
		{0, 0, 2, 2, never},
		{-5 * ms, 100 * ms, 2, 2, never}, // a failed getrusage
		// Two Ps on one CPU (serve's default there): busyShare of two
		// could never be reached.
		{95 * ms, 100 * ms, 2, 1, others},
		{30 * ms, 100 * ms, 2, 1, others},
	} {
		if got := modeOf(c.used, c.wall, c.procs, c.cpus); got != c.want {
			t.Errorf("modeOf(%v, %v, %d, %d) = %d, want %d", c.used, c.wall, c.procs, c.cpus, got, c.want)
		}
	}
}

// The sampler sets the mode from each period's CPU use, the first tick being
// the baseline.
func TestSampleFollowsTheLoad(t *testing.T) {
	defer mode.Store(never)
	mode.Store(never)
	tick := make(chan time.Time)
	cpuNow := make(chan time.Duration)
	done := make(chan struct{})
	go func() {
		sample(tick, func() time.Duration { return <-cpuNow }, func(int) int { return 2 }, 2)
		close(done)
	}()
	ms := time.Millisecond
	steps := []struct {
		cpu  time.Duration // the process's total at tick i, 100 ms apart
		want int32         // the mode once tick i is taken
	}{
		{1000 * ms, never},  // the baseline: no decision yet
		{1195 * ms, always}, // 195 ms of 200
		{1300 * ms, never},  // 105 ms of 200
		{1490 * ms, always}, // 190 ms of 200
		{1490 * ms, never},  // idle
		{1690 * ms, always}, // all of both
	}
	for i, s := range steps {
		tick <- time.Unix(1000, 0).Add(time.Duration(i) * 100 * ms)
		// The sampler took this tick: it is done with the previous one.
		if i > 0 {
			if got := mode.Load(); got != steps[i-1].want {
				t.Fatalf("after tick %d: mode %d, want %d", i-1, got, steps[i-1].want)
			}
		}
		cpuNow <- s.cpu
	}
	close(tick)
	<-done
	if got, want := mode.Load(), steps[len(steps)-1].want; got != want {
		t.Fatalf("after the last tick: mode %d, want %d", got, want)
	}
}

// cpuTime counts the process's own CPU.
func TestCPUTime(t *testing.T) {
	start := cpuTime()
	deadline := time.Now().Add(5 * time.Second)
	for cpuTime()-start < 20*time.Millisecond {
		if time.Now().After(deadline) {
			t.Fatalf("5 s of spinning counted as %v of CPU", cpuTime()-start)
		}
	}
}

// CapProcessors caps the CPUs counted: two Ps under a one-CPU quota then
// yield when others read (mode others), as two Ps pinned to one CPU do,
// where the host's CPU count would have left them never yielding.
func TestCapProcessors(t *testing.T) {
	defer cpuCap.Store(0)
	if got := Processors(); got != runtime.NumCPU() {
		t.Fatalf("no cap: %d processors, want NumCPU %d", got, runtime.NumCPU())
	}
	CapProcessors(0) // not a count: ignored
	if got := Processors(); got != runtime.NumCPU() {
		t.Fatalf("CapProcessors(0): %d processors, want %d", got, runtime.NumCPU())
	}
	CapProcessors(1)
	if got := Processors(); got != 1 {
		t.Fatalf("CapProcessors(1): %d processors", got)
	}
	if m := modeOf(950*time.Millisecond, time.Second, 2, Processors()); m != others {
		t.Errorf("two Ps on a one-CPU quota, busy: mode %d, want others (%d)", m, others)
	}
}
