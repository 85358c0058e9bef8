package link

import (
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkRelayUDP is the relay's packet rate one way at rate=unlimited:
// small UDP datagrams sent from the far side as fast as one socket can,
// counted as they arrive here. pkt/s is what the relay carried; the goal
// is 200k packets/s each way on one core.
//
//	go test -run - -bench RelayUDP -benchtime 200000x -cpuprofile cpu.out ./link
func BenchmarkRelayUDP(b *testing.B) {
	if testing.Short() {
		b.Skip("the relay benchmark; skipped with -short")
	}
	if !isRoot() {
		b.Skip("the relay needs root (network namespaces, TUN devices)")
	}
	l, err := Open(Spec{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	ln, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	_ = ln.SetReadBuffer(8 << 20)
	var got atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 2048)
		for {
			if _, err := ln.Read(buf); err != nil {
				return
			}
			got.Add(1)
		}
	}()
	c, err := l.farDial(b.Context(), "udp", ln.LocalAddr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	msg := make([]byte, 64)
	st0 := l.Stats()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if _, err := c.Write(msg); err != nil {
			i-- // ENOBUFS: the TUN queue is full; try again
			time.Sleep(10 * time.Microsecond)
		}
	}
	deadline := time.Now().Add(2 * time.Second)
	for got.Load() < int64(b.N) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	el := time.Since(start)
	b.StopTimer()
	st := l.Stats().Since(st0)
	ln.Close()
	<-done
	b.ReportMetric(float64(got.Load())/el.Seconds(), "pkt/s")
	b.ReportMetric(float64(st.CPUPerPacket.Nanoseconds()), "relay-ns/pkt")
	b.ReportMetric(100*float64(int64(b.N)-got.Load())/float64(b.N), "%lost")
}
