package server_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/quicflood"
	"github.com/wirebench/wirebench/server"
)

// BenchmarkH3InitialFlood: the process's CPU per flood connection turned
// away (two Initial packets each), with the socket filter dropping them
// and without it (quic-go sealing and sending a CONNECTION_REFUSED for
// each). The flood's packets are made before the timer; the CPU counted
// is the server's and the flood's sends (a sendto per packet, the same
// either way), so the difference between the two is the server's.
//
//	go test ./server -run XXX -bench H3InitialFlood -benchtime 20000x
func BenchmarkH3InitialFlood(b *testing.B) {
	for _, filter := range []bool{true, false} {
		b.Run(fmt.Sprintf("filter=%v", filter), func(b *testing.B) {
			srv, err := server.Start(context.Background(), server.Options{HTTPAddr: "127.0.0.1:0", NoGRPC: true,
				H3: server.H3{Addr: "127.0.0.1:0", HandshakeRate: 2, NoInitialFilter: !filter}})
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Close()
			raddr, _ := net.ResolveUDPAddr("udp", srv.H3Addr())
			pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
			if err != nil {
				b.Fatal(err)
			}
			defer pc.Close()
			go io.Copy(io.Discard, readerOf(pc)) // the replies, unread otherwise
			scid := []byte{1, 2, 3, 4, 5, 6, 7, 8}
			hello, err := quicflood.ClientHello(scid)
			if err != nil {
				b.Fatal(err)
			}
			// The packets of b.N new connections, as quicflood.Connection
			// sends them.
			var pkts [][]byte
			for range b.N {
				dcid := make([]byte, 8)
				rand.Read(dcid)
				keys := quicflood.ClientInitialKeys(dcid)
				for pn, off := 0, 0; off < len(hello); pn++ {
					p, n := quicflood.InitialPacket(nil, keys, dcid, scid, uint32(pn), hello, off)
					pkts = append(pkts, p)
					off += n
				}
			}
			handled := func() int64 {
				return metricSum(b, srv, "wirebench_h3_dropped_initials_total", "wirebench_h3_rate_refused_initials_total",
					"wirebench_h3_source_refused_initials_total")
			}
			before := handled()
			cpu0 := cpuTime()
			b.ResetTimer()
			for i, p := range pkts {
				if _, err := pc.WriteToUDP(p, raddr); err != nil {
					b.Fatal(err)
				}
				if i%128 == 127 { // within the server's socket buffer
					for handled()-before < int64(i+1)-16 {
						time.Sleep(time.Millisecond)
					}
				}
			}
			for handled()-before < int64(len(pkts))-16 {
				time.Sleep(time.Millisecond)
			}
			time.Sleep(20 * time.Millisecond) // the last refusals' sends
			b.StopTimer()
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/conn")
		})
	}
}

// readerOf reads datagrams from pc as a stream, for discarding.
func readerOf(pc *net.UDPConn) io.Reader { return pc }

// cpuTime is the process's user and system CPU time, in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// metricSum adds up every sample of the named families in /metrics.
func metricSum(tb testing.TB, srv *server.Server, names ...string) int64 {
	resp, err := http.Get("http://" + srv.HTTPAddr() + "/metrics")
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var sum int64
	for line := range strings.Lines(string(body)) {
		for _, n := range names {
			if strings.HasPrefix(line, n+" ") || strings.HasPrefix(line, n+"{") {
				var v int64
				fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &v)
				sum += v
			}
		}
	}
	return sum
}
