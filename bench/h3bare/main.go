// Command h3bare is the bare quic-go HTTP/3 server and client: what a user
// who picks HTTP/3 in Go writes instead of `wirebench serve --http3` and
// `wirebench load --transport h3`, and the yardstick both are judged by
// (DESIGN rule 9: our code against a bare program on the same library).
// Nothing of ours serves or sends: quic-go's http3.Server and
// http3.Transport with their defaults, on sockets quic-go opens itself (so
// quic-go's own Linux fast paths — batched reads, GSO, ECN — are on if the
// kernel has them).
//
//	h3bare serve [-addr 127.0.0.1:0] [-seed-users 1000] [-cpuprofile FILE] [-ballast-kb N]
//
// serves GET /users/{id} with bench/servercpu.BareHandler (net/http's
// ServeMux, the users in a map, encoding/json: the same JSON bytes as the
// reference server), the same seed users as `wirebench serve`, on a fresh
// self-signed ECDSA P-256 certificate as serve's. It prints "listening
// h3=ADDR" when it serves, and on SIGUSR1 a line "mallocs N"
// (runtime.MemStats.Mallocs) so bench/h3-cpu.sh counts allocations per
// request as it does from our server's /metrics, and a line "gc-scan
// globals G heap H stack S cycles C" (gcScan).
//
//	h3bare load [-c 50] [-conns 4] [-d 5s | -n N] [-trace] [-cpuprofile FILE] URL
//
// runs -c goroutines, each a loop of GET URL, read the body to its end,
// close it; goroutine i on connection i mod -conns, one http3.Transport
// (one QUIC connection, its own UDP socket) per connection, the
// certificate not verified (as load -k), no Accept-Encoding (as load). It prints "requests N errors E
// mallocs M" at the end (the requests answered 200 within -d). With -n the
// loops send N requests in all, however long they take, as `wirebench
// load -n` does (bench/h3-instr.sh counts instructions per request over a
// fixed count, under valgrind, where a duration would buy few). With
// -trace each connection carries a trace like `wirebench load`'s
// bytes-by-layer split by default (load/h3): quic-go's connection gets no
// recorder, http3 gets one that counts its frame events, and the line ends
// with what they counted ("frames F/F qpack Q/Q body B/B", in/out): the
// price of those events in a bare client, the yardstick of the split's
// own implementation (bench/h3-instr.sh's "baretrace").
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/bench/internal/ballast"
	"github.com/wirebench/wirebench/bench/servercpu"
	"github.com/wirebench/wirebench/store"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "serve":
		fs := flag.NewFlagSet("serve", flag.ExitOnError)
		addr := fs.String("addr", "127.0.0.1:0", "UDP `address` to listen on")
		n := fs.Int("seed-users", 1000, "users, as `wirebench serve --seed-users`")
		prof := fs.String("cpuprofile", "", "write a CPU profile of the whole run to `file`, as `wirebench serve --cpuprofile`")
		ballastKB := fs.Int("ballast-kb", 0, "keep about `N` kB of small pointer-bearing objects live, as a larger binary's package inits do (the garbage collector marks them every cycle)")
		_ = fs.Parse(os.Args[2:])
		ballast.Keep(*ballastKB)
		if *prof != "" {
			f, perr := os.Create(*prof)
			if perr == nil {
				perr = pprof.StartCPUProfile(f)
			}
			if perr != nil {
				fmt.Fprintln(os.Stderr, "h3bare:", perr)
				os.Exit(1)
			}
			defer func() { pprof.StopCPUProfile(); f.Close() }()
		}
		err = serve(*addr, *n)
	case "load":
		fs := flag.NewFlagSet("load", flag.ExitOnError)
		c := fs.Int("c", 50, "concurrent request loops")
		conns := fs.Int("conns", 4, "QUIC connections")
		d := fs.Duration("d", 5*time.Second, "duration")
		n := fs.Int64("n", 0, "requests in all (0: as many as -d allows); -d is then ignored")
		trace := fs.Bool("trace", false, "count http3's frame events, as wirebench load's bytes-by-layer split does")
		prof := fs.String("cpuprofile", "", "write a CPU profile of the run to `file`, as `wirebench load --cpuprofile`")
		_ = fs.Parse(os.Args[2:])
		if fs.NArg() != 1 || *c < 1 || *conns < 1 || *n < 0 {
			usage()
		}
		if *prof != "" {
			f, perr := os.Create(*prof)
			if perr == nil {
				perr = pprof.StartCPUProfile(f)
			}
			if perr != nil {
				fmt.Fprintln(os.Stderr, "h3bare:", perr)
				os.Exit(1)
			}
			defer func() { pprof.StopCPUProfile(); f.Close() }()
		}
		var fc *frameCount
		if *trace {
			fc = new(frameCount)
		}
		ok, bad, m := load(fs.Arg(0), *c, *conns, *d, *n, fc)
		fmt.Printf("requests %d errors %d mallocs %d", ok, bad, m)
		if fc != nil {
			fmt.Printf(" frames %d/%d qpack %d/%d body %d/%d", fc.in.frames.Load(), fc.out.frames.Load(),
				fc.in.qpack.Load(), fc.out.qpack.Load(), fc.in.body.Load(), fc.out.body.Load())
		}
		fmt.Println()
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "h3bare:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: h3bare serve [-addr A] [-seed-users N] [-cpuprofile F] | h3bare load [-c N] [-conns N] [-d D | -n N] [-cpuprofile F] URL")
	os.Exit(2)
}

// gcScan is the line "gc-scan globals G heap H stack S cycles C": what
// the garbage collector scans per cycle, in bytes (runtime/metrics'
// /gc/scan/*, as of the last cycle), and the cycles so far. `wirebench
// serve` reports the same as go_gc_scan_*_bytes on /metrics; a server
// whose cycles scan more pays more GC per byte its requests allocate.
func gcScan() string {
	s := []metrics.Sample{{Name: "/gc/scan/globals:bytes"}, {Name: "/gc/scan/heap:bytes"},
		{Name: "/gc/scan/stack:bytes"}, {Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	v := make([]uint64, len(s))
	for i, x := range s {
		if x.Value.Kind() == metrics.KindUint64 {
			v[i] = x.Value.Uint64()
		}
	}
	return fmt.Sprintf("gc-scan globals %d heap %d stack %d cycles %d", v[0], v[1], v[2], v[3])
}

func mallocs() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.Mallocs
}

func serve(addr string, n int) error {
	list, err := seedUsers(n)
	if err != nil {
		return err
	}
	cert, err := selfSigned()
	if err != nil {
		return err
	}
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return err
	}
	// A *net.UDPConn, as http3.Server.ListenAndServe opens: quic-go takes
	// its fast paths on it.
	pc, err := net.ListenUDP("udp", ua)
	if err != nil {
		return err
	}
	srv := newServer(list, cert)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1, syscall.SIGTERM, os.Interrupt)
	go func() {
		for x := range sig {
			if x != syscall.SIGUSR1 {
				srv.Close()
				pc.Close()
				return
			}
			fmt.Printf("mallocs %d\n", mallocs())
			fmt.Println(gcScan())
		}
	}()
	fmt.Printf("listening h3=%s\n", pc.LocalAddr())
	if err := srv.Serve(pc); err != nil && !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}

// newServer is quic-go's http3.Server with its defaults around the bare
// handler.
func newServer(list []api.User, cert tls.Certificate) *http3.Server {
	return &http3.Server{
		Handler:   servercpu.BareHandler(list),
		TLSConfig: http3.ConfigureTLSConfig(&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}),
	}
}

// load runs the request loops for d, or for n requests in all when n > 0:
// the requests answered 200, the others, and the process's allocations
// meanwhile. With fc, every connection's http3 frame events are counted
// into it.
func load(url string, c, conns int, d time.Duration, n int64, fc *frameCount) (ok, bad, allocs int64) {
	trs := make([]*http3.Transport, conns)
	for i := range trs {
		// No "Accept-Encoding: gzip" (as load sends none): the reference
		// server would compress its reply, the bare one not.
		trs[i] = &http3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableCompression: true}
		if fc != nil {
			trs[i].QUICConfig = &quic.Config{Tracer: fc.tracer}
		}
	}
	defer func() {
		for _, t := range trs {
			t.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	if n > 0 {
		ctx, cancel = context.WithCancel(context.Background())
	}
	defer cancel()
	var nok, nbad, left atomic.Int64
	left.Store(n)
	var wg sync.WaitGroup
	m0 := mallocs()
	for i := range c {
		client := &http.Client{Transport: trs[i%conns]}
		wg.Go(func() {
			for ctx.Err() == nil && (n == 0 || left.Add(-1) >= 0) {
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
				if err != nil {
					nbad.Add(1)
					return
				}
				resp, err := client.Do(req)
				if err != nil {
					if ctx.Err() == nil {
						nbad.Add(1)
					}
					continue
				}
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				switch {
				case err == nil && resp.StatusCode == http.StatusOK:
					nok.Add(1)
				case ctx.Err() == nil:
					nbad.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return nok.Load(), nbad.Load(), int64(mallocs() - m0)
}

// seedUsers is the reference server's dataset (store.Seed): the same
// users, byte for byte, so both servers send the same replies.
func seedUsers(n int) ([]api.User, error) {
	st := store.NewMemory(store.Options{})
	if err := st.Seed(n, 0); err != nil {
		return nil, err
	}
	return st.ListUsers(), nil
}

// selfSigned is an ECDSA P-256 certificate for localhost and 127.0.0.1,
// the kind `wirebench serve` generates, so the handshakes cost alike.
func selfSigned() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "h3bare"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
