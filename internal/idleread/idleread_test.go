package idleread

import (
	"errors"
	"io"
	"net"
	"os"
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

// Reads yield while the process is busy and only then, and return what
// the connection holds either way.
func TestYieldsOnlyWhenBusy(t *testing.T) {
	defer busy.Store(false)
	srv, cli := pair(t)
	var r Reader
	r.Init(srv)
	const n = 50
	if _, err := cli.Write(make([]byte, 2*n)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1)
	for _, b := range []bool{false, true} {
		busy.Store(b)
		before := r.Yields()
		for i := range n {
			if k, err := r.Read(buf); k != 1 || err != nil {
				t.Fatalf("busy %v, read %d: %d bytes, %v", b, i, k, err)
			}
		}
		want := uint64(0)
		if b {
			want = n
		}
		if got := r.Yields() - before; got != want {
			t.Errorf("busy %v: %d yields in %d reads, want %d", b, got, n, want)
		}
	}
}

// The errors are the connection's: a deadline, end of stream, closed; the
// zero Reader fails instead of panicking.
func TestErrorsAreTheConnections(t *testing.T) {
	defer busy.Store(false)
	busy.Store(true)
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

func TestIsBusy(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		used, wall time.Duration
		procs      int
		want       bool
	}{
		{95 * ms, 100 * ms, 2, false},
		{60 * ms, 100 * ms, 1, true}, // one P: always
		{0, 100 * ms, 1, true},
		{180 * ms, 100 * ms, 2, true}, // busyShare exactly
		{179 * ms, 100 * ms, 2, false},
		{190 * ms, 100 * ms, 2, true},
		{150 * ms, 100 * ms, 2, false}, // one of two processors idle half the time
		{30 * ms, 100 * ms, 2, false},  // a server at c=1
		{720 * ms, 100 * ms, 8, true},
		{700 * ms, 100 * ms, 8, false},
		{0, 0, 2, false},
		{-5 * ms, 100 * ms, 2, false}, // a failed getrusage
	} {
		if got := isBusy(c.used, c.wall, c.procs); got != c.want {
			t.Errorf("isBusy(%v, %v, %d) = %v, want %v", c.used, c.wall, c.procs, got, c.want)
		}
	}
}

// The sampler sets busy from each period's CPU use, the first tick being
// the baseline.
func TestSampleFollowsTheLoad(t *testing.T) {
	defer busy.Store(false)
	busy.Store(false)
	tick := make(chan time.Time)
	cpuNow := make(chan time.Duration)
	done := make(chan struct{})
	go func() {
		sample(tick, func() time.Duration { return <-cpuNow }, func(int) int { return 2 })
		close(done)
	}()
	ms := time.Millisecond
	steps := []struct {
		cpu  time.Duration // the process's total at tick i, 100 ms apart
		want bool          // busy once tick i is taken
	}{
		{1000 * ms, false}, // the baseline: no decision yet
		{1195 * ms, true},  // 195 ms of 200
		{1300 * ms, false}, // 105 ms of 200
		{1490 * ms, true},  // 190 ms of 200
		{1490 * ms, false}, // idle
		{1690 * ms, true},  // all of both
	}
	for i, s := range steps {
		tick <- time.Unix(1000, 0).Add(time.Duration(i) * 100 * ms)
		// The sampler took this tick: it is done with the previous one.
		if i > 0 {
			if got := busy.Load(); got != steps[i-1].want {
				t.Fatalf("after tick %d: busy %v, want %v", i-1, got, steps[i-1].want)
			}
		}
		cpuNow <- s.cpu
	}
	close(tick)
	<-done
	if got, want := busy.Load(), steps[len(steps)-1].want; got != want {
		t.Fatalf("after the last tick: busy %v, want %v", got, want)
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
