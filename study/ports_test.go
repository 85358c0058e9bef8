package study

import (
	"context"
	"errors"
	"net"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"
)

func TestParsePortRange(t *testing.T) {
	t.Parallel()
	if r, err := ParsePortRange("9000-9099"); err != nil || r != (PortRange{9000, 9099}) {
		t.Errorf("9000-9099: %v, %v", r, err)
	}
	for _, s := range []string{"", "9000", "9000-", "-9000", "9100-9000", "0-10", "1-65536", "a-b", "9000-9099-9100", "-1-5"} {
		if _, err := ParsePortRange(s); !errors.Is(err, ErrPorts) {
			t.Errorf("%q: %v, want ErrPorts", s, err)
		}
	}
}

// freeRange finds a range of n consecutive loopback ports (n <= 10) that
// were all free a moment ago, below the kernel's ephemeral ports: no other
// test's 127.0.0.1:0 listener or outgoing connection takes one between
// this check and the study's bind (a range found from a released kernel
// port raced with them). Blocks of 10 from 10000, a start per test process
// (pid) and call, apart from testPorts' 20000-29999; each port is bound
// and released to check it (checking only the first made the tests fail
// whenever another process held one of the next ports).
func freeRange(t *testing.T, n int) PortRange {
	t.Helper()
	if n > 10 {
		t.Fatalf("freeRange: %d ports, at most 10", n)
	}
	for try := 0; try < 50; try++ {
		freeRangeCalls++
		lo := 10000 + (os.Getpid()*8+freeRangeCalls)%1000*10
		held := make([]net.Listener, 0, n)
		for p := lo; p < lo+n; p++ {
			l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
			if err != nil {
				break
			}
			held = append(held, l)
		}
		for _, l := range held {
			l.Close()
		}
		if len(held) == n {
			return PortRange{lo, lo + n - 1}
		}
	}
	t.Skipf("no %d consecutive free ports found in 50 tries", n)
	return PortRange{}
}

var freeRangeCalls int

// TestFreePortsInRange: ports come from the range only, distinct, skipping
// those in use; a used-up range is a clear error.
func TestFreePortsInRange(t *testing.T) {
	r := freeRange(t, 4)
	busy, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(r.Lo+1))
	if err != nil {
		t.Skipf("port %d taken meanwhile: %v", r.Lo+1, err)
	}
	defer busy.Close()
	ports, err := freePorts(3, r)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ports)
	want := []int{r.Lo, r.Lo + 2, r.Lo + 3}
	if !slices.Equal(ports, want) {
		t.Errorf("ports %v, want %v (in %s, %d busy)", ports, want, r, r.Lo+1)
	}
	_, err = freePorts(4, r)
	if !errors.Is(err, ErrPorts) || err.Error() != "study: ports: --ports "+r.String()+" exhausted: 3 free of the 4 needed (the others are in use)" {
		t.Errorf("4 of a range with 3 free: %v", err)
	}
}

// TestStudyBindsPortsInRange: a user study run with --ports starts every
// trial's server on ports of the range; a range too small for a cell is
// refused before anything starts.
func TestStudyBindsPortsInRange(t *testing.T) {
	def := writeStudy(t, `
name: ports
trials: 2
warmup: 0s
duration: 200ms
server:
  env: {`+testServerEnv+`: "1"}
load: {url: "http://127.0.0.1:{port}/", concurrency: 1, expect_body_contains: "ok"}
cells:
  - name: a
    server: {command: ["{bin}", "-addr", "127.0.0.1:{port}"], ready: "http://127.0.0.1:{port}/"}
  - name: b
    server: {command: ["{bin}", "-addr", "127.0.0.1:{port2}"], ready: "http://127.0.0.1:{port2}/"}
    load: {url: "http://127.0.0.1:{port2}/"}
`)
	r := freeRange(t, 8)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := Run(ctx, def, Options{Seed: 1, NoPin: true, Ports: r})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tr := range res.Trials {
		if tr.Error != "" {
			t.Fatalf("trial %s %d: %s", tr.Cell, tr.Index, tr.Error)
		}
		for _, p := range tr.Ports {
			n++
			if p < r.Lo || p > r.Hi {
				t.Errorf("trial %s %d: port %d outside %s", tr.Cell, tr.Index, p, r)
			}
		}
	}
	if n != 6 { // a: 1 port, b: 2, two trials each
		t.Errorf("%d ports in all, want 6", n)
	}
	_, err = Run(ctx, def, Options{Seed: 1, NoPin: true, Ports: PortRange{r.Lo, r.Lo}})
	if !errors.Is(err, ErrPorts) || err.Error() != "study: ports: --ports "+strconv.Itoa(r.Lo)+"-"+strconv.Itoa(r.Lo)+" holds 1 ports; cell ports/b needs 2 at once" {
		t.Errorf("range of 1 for a cell of 2: %v", err)
	}
}

// FuzzParsePortRange: any text is a valid range (within 1..65535, LO <=
// HI) that prints back to what parses to it, or ErrPorts.
func FuzzParsePortRange(f *testing.F) {
	for _, s := range []string{"9000-9099", "1-65535", "9100-9000", "", "-", "0-0", " 80 - 81 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParsePortRange(s)
		if err != nil {
			if !errors.Is(err, ErrPorts) {
				t.Fatalf("%q: error %v does not wrap ErrPorts", s, err)
			}
			return
		}
		if r.Lo < 1 || r.Hi > 65535 || r.Lo > r.Hi {
			t.Fatalf("%q: accepted %v", s, r)
		}
		if back, err := ParsePortRange(r.String()); err != nil || back != r {
			t.Fatalf("%q: %v does not round-trip: %v, %v", s, r, back, err)
		}
	})
}
