package link

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wirebench/wirebench/results"
)

// Calibration is the link actually obtained, measured through it before a
// run, beside the spec that was asked for (plain data, in the results).
type Calibration = results.LinkCalibration

// CalibrateOptions size the calibration; the zero value is the default.
type CalibrateOptions struct {
	// Probes is the number of round trips of each kind (default 10).
	Probes int
	// Bulk is the length of each bulk transfer (default: 1 s, or 8 RTTs
	// when longer, at most 8 s); negative skips them.
	Bulk time.Duration
	// LossPackets each way (default: 2,000, fewer on slow links so that
	// the probe takes about a second; at least 200); negative skips.
	LossPackets int
}

// Calibrate measures the link: round trips, bulk rate each way, loss.
// Servers run on the near side (this process's namespace) at 127.0.0.1.
func (l *Link) Calibrate(ctx context.Context, o CalibrateOptions) (*Calibration, error) {
	start := time.Now()
	st0 := l.Stats()
	// The kernel switches its receive stamps on from a work queue a moment
	// after the first socket asks: one asking from the start has them on
	// by the time of the rate floods (stampArrivals).
	if keep, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}); err == nil {
		stampArrivals(keep)
		defer keep.Close()
	}
	c := &Calibration{RTTExpected: l.expectedRTT(64), UpRate: l.Spec.Up, DownRate: l.Spec.Down, LossSet: l.Spec.Loss.Rate()}
	if o.Probes <= 0 {
		o.Probes = 10
	}
	var err error
	if c.RTTConnect, c.RTTTCP, c.RTTTCPMedian, err = l.tcpRTT(ctx, o.Probes); err != nil {
		return nil, fmt.Errorf("calibration: TCP round trips: %w", err)
	}
	if c.RTTUDP, c.RTTUDPMedian, err = l.udpRTT(ctx, o.Probes); err != nil {
		return nil, fmt.Errorf("calibration: UDP round trips: %w", err)
	}
	if o.LossPackets >= 0 {
		n := o.LossPackets
		if n == 0 {
			n = 2000
			if r := min(nonZero(l.Spec.Up), nonZero(l.Spec.Down)); r < math.MaxInt64 {
				n = max(200, min(n, int(r/2/(100*8)))) // a second at half the rate
			}
		}
		c.LossPackets = n
		if c.LossUp, c.LossDown, err = l.udpLoss(ctx, n); err != nil {
			return nil, fmt.Errorf("calibration: UDP loss: %w", err)
		}
	}
	if o.Bulk >= 0 {
		// A limited rate is the link's, whatever TCP makes of it: measured
		// by a UDP flood at 1.5× it (TCP's slow start on a long round trip,
		// or its response to loss, would understate it).
		// Both ways at once: each direction has its own pipe.
		var floods sync.WaitGroup
		errs := make([]error, 2)
		for i, r := range []struct {
			up  bool
			set int64
			got *float64
		}{{true, l.Spec.Up, &c.UpWire}, {false, l.Spec.Down, &c.DownWire}} {
			if r.set == 0 {
				continue
			}
			floods.Add(1)
			go func() {
				defer floods.Done()
				*r.got, errs[i] = l.udpRate(ctx, r.up, r.set)
			}()
		}
		floods.Wait()
		if err := errors.Join(errs...); err != nil {
			return nil, fmt.Errorf("calibration: UDP rate: %w", err)
		}
		// TCP last: what it leaves in a slow link's queue would disturb
		// the probes after it.
		d := o.Bulk
		if d == 0 {
			d = min(max(time.Second, 8*l.Spec.RTT()), 8*time.Second)
		}
		var upWire, downWire float64
		if c.UpGoodput, upWire, err = l.bulk(ctx, true, d); err != nil {
			return nil, fmt.Errorf("calibration: bulk upload: %w", err)
		}
		if c.DownGoodput, downWire, err = l.bulk(ctx, false, d); err != nil {
			return nil, fmt.Errorf("calibration: bulk download: %w", err)
		}
		if l.Spec.Up == 0 {
			c.UpWire = upWire // unlimited: as much as the relay carried
		}
		if l.Spec.Down == 0 {
			c.DownWire = downWire
		}
	}
	st := l.Stats()
	if n := st.Up.Packets + st.Down.Packets - st0.Up.Packets - st0.Down.Packets; n > 0 {
		c.CPUPerPacket = (st.CPU - st0.CPU) / time.Duration(n)
	}
	c.Late = st.Late
	c.Took = time.Since(start)
	if err := Check(c, l.Spec); err != nil {
		c.Off = strings.TrimPrefix(err.Error(), ErrCalibration.Error()+": ")
	}
	return c, nil
}

func nonZero(r int64) int64 {
	if r == 0 {
		return math.MaxInt64
	}
	return r
}

// expectedRTT is 2×delay plus the serialisation of a size-byte packet
// each way.
func (l *Link) expectedRTT(size int) time.Duration {
	d := l.Spec.RTT()
	for _, r := range []int64{l.Spec.Up, l.Spec.Down} {
		if r > 0 {
			d += time.Duration(float64(size*8) / float64(r) * 1e9)
		}
	}
	return d
}

// farDial dials a near-side address from the far side.
func (l *Link) farDial(ctx context.Context, network, addr string) (net.Conn, error) {
	var c net.Conn
	err := l.Do(func() (err error) {
		var d net.Dialer
		c, err = d.DialContext(ctx, network, addr)
		return err
	})
	return c, err
}

// tcpRTT: the minimum handshake of a few connections, then the minimum
// and median of n one-byte echoes on one connection.
func (l *Link) tcpRTT(ctx context.Context, n int) (connect, rtt, median time.Duration, err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, 0, 0, err
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second+20*l.Spec.RTT())
	defer cancel()
	connect = time.Duration(math.MaxInt64)
	for range 3 {
		t0 := time.Now()
		c, err := l.farDial(ctx, "tcp", ln.Addr().String())
		if err != nil {
			return 0, 0, 0, err
		}
		connect = min(connect, time.Since(t0))
		c.Close()
	}
	c, err := l.farDial(ctx, "tcp", ln.Addr().String())
	if err != nil {
		return 0, 0, 0, err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Now()) })
	defer stop()
	var rtts []time.Duration
	b := []byte{1}
	for range n {
		t0 := time.Now()
		if _, err := c.Write(b); err != nil {
			return 0, 0, 0, err
		}
		if _, err := io.ReadFull(c, b); err != nil {
			return 0, 0, 0, err
		}
		rtts = append(rtts, time.Since(t0))
	}
	slices.Sort(rtts)
	return connect, rtts[0], rtts[len(rtts)/2], nil
}

// udpRTT: the minimum and median of n echoes of a small datagram; a lost
// one is sent again after a timeout.
func (l *Link) udpRTT(ctx context.Context, n int) (rtt, median time.Duration, err error) {
	srv, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return 0, 0, err
	}
	defer srv.Close()
	go func() {
		b := make([]byte, 2048)
		for {
			k, a, err := srv.ReadFromUDP(b)
			if err != nil {
				return
			}
			srv.WriteToUDP(b[:k], a)
		}
	}()
	c, err := l.farDial(ctx, "udp", srv.LocalAddr().String())
	if err != nil {
		return 0, 0, err
	}
	defer c.Close()
	timeout := 2*l.expectedRTT(64) + 200*time.Millisecond
	var rtts []time.Duration
	b := make([]byte, 36) // 64-byte IP packets
	r := make([]byte, 2048)
	for seq := uint32(0); len(rtts) < n; seq++ {
		if ctx.Err() != nil || seq > uint32(20*n) {
			return 0, 0, errors.Join(ctx.Err(), fmt.Errorf("%d of %d echoes came back", len(rtts), seq))
		}
		binary.BigEndian.PutUint32(b, seq)
		t0 := time.Now()
		if _, err := c.Write(b); err != nil {
			return 0, 0, err
		}
		c.SetReadDeadline(t0.Add(timeout))
		for {
			k, err := c.Read(r)
			if err != nil {
				break // lost: the next seq
			}
			if k == len(b) && binary.BigEndian.Uint32(r) == seq {
				rtts = append(rtts, time.Since(t0))
				break
			}
		}
	}
	slices.Sort(rtts)
	return rtts[0], rtts[len(rtts)/2], nil
}

// udpLoss sends n datagrams each way, paced at half the slower rate (no
// queue drops), and counts what arrives.
func (l *Link) udpLoss(ctx context.Context, n int) (up, down float64, err error) {
	near, err := net.ListenUDP("udp", &net.UDPAddr{IP: l.Near.AsSlice()})
	if err != nil {
		return 0, 0, err
	}
	defer near.Close()
	var far *net.UDPConn
	if err := l.Do(func() (err error) {
		far, err = net.ListenUDP("udp", &net.UDPAddr{IP: l.Far.AsSlice()})
		return err
	}); err != nil {
		return 0, 0, err
	}
	defer far.Close()
	const size = 72 // 100-byte IP packets
	// At most 20,000 a second on an unlimited link: the probe measures
	// the link's loss, not how many packets the relay can take at once.
	gap := 50 * time.Microsecond
	if r := min(nonZero(l.Spec.Up), nonZero(l.Spec.Down)); r < math.MaxInt64 {
		gap = max(gap, time.Duration(float64(2*100*8)/float64(r)*1e9))
	}
	count := func(conn *net.UDPConn, got *int, wg *sync.WaitGroup) {
		defer wg.Done()
		b := make([]byte, 2048)
		for {
			k, err := conn.Read(b)
			if err != nil {
				return
			}
			if k == size {
				*got++
			}
		}
	}
	send := func(from *net.UDPConn, to *net.UDPAddr) error {
		b := make([]byte, size)
		t0 := time.Now()
		for i := range n {
			if gap > 0 {
				if w := time.Until(t0.Add(time.Duration(i) * gap)); w > 0 {
					time.Sleep(w)
				}
			}
			binary.BigEndian.PutUint32(b, uint32(i))
			if _, err := from.WriteToUDP(b, to); err != nil {
				return err
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
		return nil
	}
	// Room for every probe in the receive buffers: a counter the
	// scheduler holds back must not turn into loss.
	near.SetReadBuffer(4 << 20)
	far.SetReadBuffer(4 << 20)
	var gotUp, gotDown int
	var wg sync.WaitGroup
	wg.Add(2)
	go count(near, &gotUp, &wg)
	go count(far, &gotDown, &wg)
	// Both ways at once: each direction has its own pipe.
	var errUp, errDown error
	var sends sync.WaitGroup
	sends.Add(2)
	go func() { defer sends.Done(); errUp = send(far, near.LocalAddr().(*net.UDPAddr)) }()
	go func() { defer sends.Done(); errDown = send(near, far.LocalAddr().(*net.UDPAddr)) }()
	sends.Wait()
	// The last ones in flight: a round trip and a margin.
	time.Sleep(l.expectedRTT(100) + 100*time.Millisecond)
	near.Close()
	far.Close()
	wg.Wait()
	if err := errors.Join(errUp, errDown); err != nil {
		return 0, 0, err
	}
	return 1 - float64(gotUp)/float64(n), 1 - float64(gotDown)/float64(n), nil
}

// bulk sends as much as TCP will for d, from the far side (up) or the
// near one, and measures goodput and the pipe's wire rate over its second
// half.
// udpRate floods one direction with full-size datagrams at 1.5× its
// rate for 0.5 s and returns the rate they arrive at (IP bytes).
func (l *Link) udpRate(ctx context.Context, up bool, rate int64) (float64, error) {
	near, err := net.ListenUDP("udp", &net.UDPAddr{IP: l.Near.AsSlice()})
	if err != nil {
		return 0, err
	}
	defer near.Close()
	var far *net.UDPConn
	if err := l.Do(func() (err error) {
		far, err = net.ListenUDP("udp", &net.UDPAddr{IP: l.Far.AsSlice()})
		return err
	}); err != nil {
		return 0, err
	}
	defer far.Close()
	from, to := near, far
	if up {
		from, to = far, near
	}
	to.SetReadBuffer(8 << 20)
	// Each datagram timed by its arrival, not by when the reader got to it:
	// both floods' readers share this process, and one held back by a busy
	// machine made a 3g link's slope 11% slow both ways at once.
	stampArrivals(to)
	const size = MTU - 28 // IP and UDP headers
	var arrivals []time.Duration
	t0 := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		b, oob := make([]byte, 2048), make([]byte, 128)
		for {
			k, at, _, err := readStamped(to, b, oob)
			if err != nil {
				return
			}
			if k == size {
				arrivals = append(arrivals, at.Sub(t0))
			}
		}
	}()
	// 1.5×: the queue stays full through the sender's own hiccups.
	gap := time.Duration(float64(MTU*8) / (1.5 * float64(rate)) * 1e9)
	n := int(500*time.Millisecond/gap) + 1
	b := make([]byte, size)
	for i := range n {
		if w := time.Until(t0.Add(time.Duration(i) * gap)); w > 0 {
			time.Sleep(w)
		}
		if _, err := from.WriteToUDP(b, to.LocalAddr().(*net.UDPAddr)); err != nil {
			return 0, err
		}
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
	}
	// What is queued drains at the rate: a queue's worth at most, and the delay.
	drain := time.Duration(float64(n*MTU*8)/float64(rate)*1e9) - time.Since(t0)
	time.Sleep(max(drain, 0) + l.Spec.Delay + 2*l.Spec.Jitter + 100*time.Millisecond)
	to.Close()
	<-done
	return arrivalRate(arrivals, MTU)
}

// arrivalRate is the rate in bits/s of packets of size bytes arriving at
// the given times: the least-squares slope of bytes received against
// time, which one late wake-up (a burst, a receiver held back at the
// start) moves far less than first-to-last would.
func arrivalRate(at []time.Duration, size int) (float64, error) {
	n := float64(len(at))
	if len(at) < 3 {
		return 0, errors.New("fewer than three datagrams arrived")
	}
	var st, sy, stt, sty float64
	for i, a := range at {
		t, y := a.Seconds(), float64(i*size*8)
		st, sy, stt, sty = st+t, sy+y, stt+t*t, sty+t*y
	}
	d := n*stt - st*st
	if d <= 0 {
		return 0, errors.New("the datagrams arrived all at once")
	}
	return (n*sty - st*sy) / d, nil
}

func (l *Link) bulk(ctx context.Context, up bool, d time.Duration) (goodput, wire float64, err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, 0, err
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	fc, err := l.farDial(ctx, "tcp", ln.Addr().String())
	if err != nil {
		return 0, 0, err
	}
	defer fc.Close()
	nc, ok := <-accepted
	if !ok {
		return 0, 0, errors.New("no connection accepted")
	}
	defer nc.Close()
	src, dst := nc, fc
	if up {
		src, dst = fc, nc
	}
	var mu sync.Mutex
	var read int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		b := make([]byte, 64<<10)
		for {
			k, err := dst.Read(b)
			mu.Lock()
			read += int64(k)
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() {
		b := make([]byte, 64<<10)
		for {
			if _, err := src.Write(b); err != nil {
				return
			}
		}
	}()
	pipeBytes := func() int64 {
		if up {
			return l.up.wrote.Load()
		}
		return l.down.wrote.Load()
	}
	select {
	case <-time.After(d / 2):
	case <-ctx.Done():
		return 0, 0, ctx.Err()
	}
	mu.Lock()
	r0, t0 := read, time.Now()
	mu.Unlock()
	p0 := pipeBytes()
	select {
	case <-time.After(d - d/2):
	case <-ctx.Done():
		return 0, 0, ctx.Err()
	}
	mu.Lock()
	r1, t1 := read, time.Now()
	mu.Unlock()
	p1 := pipeBytes()
	src.Close()
	dst.Close()
	<-done
	s := t1.Sub(t0).Seconds()
	return float64(r1-r0) * 8 / s, float64(p1-p0) * 8 / s, nil
}

// Check compares the calibration with its spec: an RTT further than
// RTTTolerance from the expected one (the median's, widened by twice the
// jitter, when there is jitter), a bulk wire rate further than
// RateTolerance from the set rate (on a lossless link), or a loss beyond
// LossTolerance, is an error that names both.
func Check(c *Calibration, s Spec) error {
	var bad []string
	tol, rtt, which := RTTTolerance(c.RTTExpected), c.RTTUDP, "UDP RTT"
	if s.Jitter > 0 {
		// Jitter moves the minimum below the set delay: the median is the
		// figure to compare, within a margin for its spread.
		tol, rtt, which = tol+2*s.Jitter, c.RTTUDPMedian, "median UDP RTT"
	}
	if d := rtt - c.RTTExpected; d > tol || d < -tol {
		bad = append(bad, fmt.Sprintf("%s %v, set %v (±%v)", which, rtt.Round(10*time.Microsecond), c.RTTExpected.Round(10*time.Microsecond), tol.Round(10*time.Microsecond)))
	}
	for _, r := range []struct {
		name      string
		set       int64
		got, good float64
	}{{"up", s.Up, c.UpWire, c.UpGoodput}, {"down", s.Down, c.DownWire, c.DownGoodput}} {
		if r.set == 0 || r.got == 0 || !s.Loss.Zero() {
			continue // TCP does not fill a lossy link: its rate is TCP's, not the link's
		}
		if math.Abs(r.got-float64(r.set))/float64(r.set) > RateTolerance {
			bad = append(bad, fmt.Sprintf("%s rate %.3gmbit, set %s (±%.0f%%)", r.name, r.got/1e6, FormatRate(r.set), RateTolerance*100))
		}
	}
	if c.LossPackets > 0 {
		set := s.Loss.Rate()
		for _, m := range []struct {
			name string
			got  float64
		}{{"up", c.LossUp}, {"down", c.LossDown}} {
			if tol := LossTolerance(s.Loss, c.LossPackets); math.Abs(m.got-set) > tol {
				bad = append(bad, fmt.Sprintf("%s loss %.2f%%, set %.2f%% (±%.2f%% over %d datagrams)", m.name, m.got*100, set*100, tol*100, c.LossPackets))
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: %s", ErrCalibration, strings.Join(bad, "; "))
	}
	return nil
}

// ErrCalibration reports a link measured off its spec.
var ErrCalibration = errors.New("link: the link obtained is off its spec")

// Tolerances of Check: the relay's timers and a busy machine's
// scheduling add to every delay, hence a floor of 2 ms.
const RateTolerance = 0.10

// LossTolerance is four standard errors of the loss measured over n
// packets, widened for bursty loss by its correlation, plus two packets.
func LossTolerance(l Loss, n int) float64 {
	p := l.Rate()
	corr := 1.0
	if l.P > 0 {
		rho := 1 - l.P - l.R
		corr = (1 + rho) / (1 - rho)
	}
	return 4*math.Sqrt(p*(1-p)/float64(n)*corr) + 2/float64(n)
}

// RTTTolerance is 2 ms or 5% of the expected RTT, the larger.
func RTTTolerance(expected time.Duration) time.Duration {
	return max(2*time.Millisecond, expected/20)
}
