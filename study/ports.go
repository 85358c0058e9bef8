package study

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
)

// PortRange keeps the ports a study's servers bind ({port}, {port2}, ...)
// inside LO-HI (--ports), for a firewall or a machine shared with other
// services. The zero value lets the kernel choose.
type PortRange struct{ Lo, Hi int }

// ErrPorts marks a port range that is invalid, too small or used up.
var ErrPorts = errors.New("study: ports")

// ParsePortRange reads "LO-HI" (9000-9099), 1 ≤ LO ≤ HI ≤ 65535.
func ParsePortRange(s string) (PortRange, error) {
	a, b, ok := strings.Cut(s, "-")
	lo, err1 := strconv.Atoi(strings.TrimSpace(a))
	hi, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || lo < 1 || hi > 65535 || lo > hi {
		return PortRange{}, fmt.Errorf("%w: %q: want LO-HI with 1 <= LO <= HI <= 65535, such as 9000-9099", ErrPorts, s)
	}
	return PortRange{lo, hi}, nil
}

func (r PortRange) String() string { return fmt.Sprintf("%d-%d", r.Lo, r.Hi) }

// size is how many ports the range holds (0: no range).
func (r PortRange) size() int {
	if r == (PortRange{}) {
		return 0
	}
	return r.Hi - r.Lo + 1
}

// Fits refuses a range smaller than what one trial of some cell binds at
// once, before anything starts.
func (r PortRange) Fits(def Definition) error {
	if r.size() == 0 {
		return nil
	}
	for _, c := range def.Cells {
		if n, _ := c.ports(); n > r.size() {
			return fmt.Errorf("%w: --ports %s holds %d ports; cell %s needs %d at once", ErrPorts, r, r.size(), c.ID(), n)
		}
	}
	return nil
}

// rangeCursor is where the next search in a range starts, so that
// successive trials take successive ports rather than one just released.
var rangeCursor struct {
	sync.Mutex
	next int
}

// freePorts finds n distinct free loopback ports: from the kernel, or
// within r. Each is checked by binding it; they are released before the
// server binds them, so another process could take one in between (the
// trial then fails visibly: the server cannot bind).
func freePorts(n int, r PortRange) ([]int, error) {
	ports := make([]int, 0, n)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	if r.size() == 0 {
		for range n {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				return nil, fmt.Errorf("study: find a free port: %w", err)
			}
			ls = append(ls, l)
			ports = append(ports, l.Addr().(*net.TCPAddr).Port)
		}
		return ports, nil
	}
	rangeCursor.Lock()
	defer rangeCursor.Unlock()
	start := rangeCursor.next
	if start < r.Lo || start > r.Hi {
		start = r.Lo
	}
	for i := 0; i < r.size() && len(ports) < n; i++ {
		p := r.Lo + (start-r.Lo+i)%r.size()
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue // in use
		}
		ls = append(ls, l)
		ports = append(ports, p)
		rangeCursor.next = p + 1
	}
	if len(ports) < n {
		return nil, fmt.Errorf("%w: --ports %s exhausted: %d free of the %d needed (the others are in use)", ErrPorts, r, len(ports), n)
	}
	return ports, nil
}
