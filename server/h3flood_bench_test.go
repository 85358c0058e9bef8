package server_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"golang.org/x/net/ipv4"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
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
// either way), so the difference between the two is the server's. The
// sink is the floor: the same sends to a socket whose reader discards
// every datagram (recvmmsg, as quic-go reads). rcvbuf-drops: datagrams
// the kernel dropped for a full buffer meanwhile, on any socket of the
// machine (they would spare the server their cost).
//
//	go test ./server -run XXX -bench H3InitialFlood -benchtime 20000x
func BenchmarkH3InitialFlood(b *testing.B) {
	b.Run("sink", benchSink)
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
			pkts := floodPackets(b, b.N)
			handled := func() int64 {
				return metricSum(b, srv, "wirebench_h3_dropped_initials_total", "wirebench_h3_rate_refused_initials_total",
					"wirebench_h3_source_refused_initials_total")
			}
			before := handled()
			drops0 := rcvbufErrors()
			cpu0 := cpuTime()
			b.ResetTimer()
			for i, p := range pkts {
				if _, err := pc.WriteToUDP(p, raddr); err != nil {
					b.Fatal(err)
				}
				// Wait for the server now and then (a scrape of /metrics
				// costs ~1 ms, so not often), staying within its socket's
				// buffer (4 MiB here): the kernel dropping datagrams would
				// spare the server their cost.
				if i%1024 == 1023 {
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
			b.ReportMetric(float64(rcvbufErrors()-drops0), "rcvbuf-drops")
		})
	}
}

// floodPackets are the Initial packets of n new connections, as
// quicflood.Connection sends them.
func floodPackets(tb testing.TB, n int) [][]byte {
	scid := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	hello, err := quicflood.ClientHello(scid)
	if err != nil {
		tb.Fatal(err)
	}
	var pkts [][]byte
	for range n {
		dcid := make([]byte, 8)
		rand.Read(dcid)
		keys := quicflood.ClientInitialKeys(dcid)
		for pn, off := 0, 0; off < len(hello); pn++ {
			p, k := quicflood.InitialPacket(nil, keys, dcid, scid, uint32(pn), hello, off)
			pkts = append(pkts, p)
			off += k
		}
	}
	return pkts
}

func benchSink(b *testing.B) {
	sink, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		b.Fatal(err)
	}
	defer sink.Close()
	sink.SetReadBuffer(4 << 20)
	var got atomic.Int64
	go func() {
		pc := ipv4.NewPacketConn(sink)
		ms := make([]ipv4.Message, 8)
		for i := range ms {
			ms[i].Buffers = [][]byte{make([]byte, 1500)}
			ms[i].OOB = make([]byte, 128)
		}
		for {
			n, err := pc.ReadBatch(ms, 0)
			if err != nil {
				return
			}
			got.Add(int64(n))
		}
	}()
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		b.Fatal(err)
	}
	defer pc.Close()
	pkts := floodPackets(b, b.N)
	raddr := sink.LocalAddr().(*net.UDPAddr)
	drops0 := rcvbufErrors()
	cpu0 := cpuTime()
	b.ResetTimer()
	for i, p := range pkts {
		if _, err := pc.WriteToUDP(p, raddr); err != nil {
			b.Fatal(err)
		}
		if i%1024 == 1023 {
			for got.Load() < int64(i+1)-16 {
				time.Sleep(time.Millisecond)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/conn")
	b.ReportMetric(float64(rcvbufErrors()-drops0), "rcvbuf-drops")
}

// rcvbufErrors is the kernel's count of UDP datagrams dropped for a full
// receive buffer (/proc/net/snmp's Udp RcvbufErrors; 0 elsewhere).
func rcvbufErrors() int64 {
	b, err := os.ReadFile("/proc/net/snmp")
	if err != nil {
		return 0
	}
	var names []string
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "Udp:" {
			continue
		}
		if names == nil {
			names = f
			continue
		}
		for i, n := range names {
			if n == "RcvbufErrors" && i < len(f) {
				v, _ := strconv.ParseInt(f[i], 10, 64)
				return v
			}
		}
	}
	return 0
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
