//go:build linux && (amd64 || arm64)

// Command uringka is the prototype behind the io_uring driver of the load
// client: a closed keep-alive HTTP/1.1 loop over c connections on one
// io_uring (internal/uring), to measure its CPU per request against wrk's
// on the same server before the loop is built into load/ (issue 41).
//
// Per request it queues one SEND (its success completion skipped) and
// takes the response from a multishot RECV into provided buffers, each
// response parsed and checked with the load client's own parser
// (h1.Stream) and its latency recorded in the same histogram; one
// io_uring_enter submits every send of a turn and waits for the next
// completions.
//
//	taskset -c 1 target & taskset -c 0 /usr/bin/time uringka -c 50 -d 5s http://127.0.0.1:PORT/
package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/wirebench/wirebench/internal/uring"
	"github.com/wirebench/wirebench/load/h1"
	"github.com/wirebench/wirebench/measure"
)

const (
	opSend = 1
	opRecv = 2
)

type conn struct {
	fd   int
	s    h1.Stream
	sent time.Time
}

var (
	fixed  bool
	sqpoll = -1
)

func main() {
	c := flag.Int("c", 50, "connections")
	d := flag.Duration("d", 5*time.Second, "duration")
	wait := flag.Uint("wait", 1, "completions to wait for per io_uring_enter")
	minWait := flag.Uint("minwait", 0, "with -wait > 1, `µs` after which one completion is enough")
	flag.BoolVar(&fixed, "fixed", false, "register the ring's and the sockets' descriptors")
	flag.IntVar(&sqpoll, "sqpoll", -1, "submit through a SQPOLL kernel thread pinned to `cpu` (its CPU is the process's: checked at the end)")
	flag.Parse()
	if err := run(flag.Arg(0), *c, *d, uint32(*wait), uint32(*minWait)); err != nil {
		fmt.Fprintln(os.Stderr, "uringka:", err)
		os.Exit(1)
	}
}

func run(rawURL string, nc int, dur time.Duration, wait, minWait uint32) error {
	runtime.LockOSThread()
	u, err := url.Parse(rawURL)
	if err != nil {
		return err
	}
	req := h1.AppendRequest(nil, "GET", u.RequestURI(), u.Host, nil, nil, true)
	port, _ := strconv.Atoi(u.Port())
	sa := &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}

	var r *uring.Ring
	if sqpoll >= 0 {
		r, err = uring.NewSQPoll(256, uint32(sqpoll), 10)
	} else {
		r, err = uring.New(256)
	}
	if err != nil {
		return err
	}
	defer r.Close()
	if err := r.SetMinWait(minWait); err != nil {
		return err
	}
	br, err := r.NewBufRing(0, 256, 4096)
	if err != nil {
		return err
	}
	conns := make([]conn, nc)
	for i := range conns {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
		if err := unix.Connect(fd, sa); err != nil {
			return err
		}
		unix.SetNonblock(fd, true)
		conns[i].fd = fd
		conns[i].s.Reset(false, false)
	}
	fdOf := func(i int) int32 { return int32(conns[i].fd) }
	var sqFlags uint8
	if fixed {
		fds := make([]int32, nc)
		for i := range conns {
			fds[i] = int32(conns[i].fd)
		}
		if err := r.RegisterFiles(fds); err != nil {
			return err
		}
		if err := r.RegisterRing(); err != nil {
			return err
		}
		fdOf, sqFlags = func(i int) int32 { return int32(i) }, uring.SqeFixedFile
	}
	hist := measure.NewHistogram()
	send := func(i int, now time.Time) {
		s := r.SQE()
		if s == nil {
			r.Enter(0, 0)
			s = r.SQE()
		}
		s.Opcode, s.Fd = uring.OpSend, fdOf(i)
		s.Addr, s.Len = uint64(uintptr(unsafe.Pointer(&req[0]))), uint32(len(req))
		s.OpFlags = unix.MSG_WAITALL | unix.MSG_NOSIGNAL
		s.Flags = uring.SqeCQESkipSucces | sqFlags
		s.UserData = uint64(i)<<8 | opSend
		conns[i].sent = now
	}
	recv := func(i int) {
		s := r.SQE()
		if s == nil {
			r.Enter(0, 0)
			s = r.SQE()
		}
		s.Opcode, s.Fd = uring.OpRecv, fdOf(i)
		s.Ioprio = uring.RecvMultishot
		s.Flags = uring.SqeBufferSelect | sqFlags
		s.BufIndex = 0
		s.UserData = uint64(i)<<8 | opRecv
	}
	start := time.Now()
	end := start.Add(dur)
	for i := range conns {
		recv(i)
		send(i, start)
	}
	var n, fails, inflight, enters int64 = 0, 0, int64(nc), 0
	issuing := true
	var cqErr error
	for inflight > 0 {
		enters++
		if err := r.Enter(min(wait, uint32(inflight)), 5e6); err != nil {
			return err
		}
		now := time.Now()
		if issuing && !now.Before(end) {
			issuing = false
		}
		gave := false
		r.Completions(func(q *uring.CQE) {
			i, op := int(q.UserData>>8), q.UserData&0xff
			cn := &conns[i]
			switch {
			case op == opSend: // only failures or short sends arrive
				cqErr = fmt.Errorf("send on conn %d: res %d", i, q.Res)
			case q.Res > 0 && q.Flags&uring.CQEFBuffer != 0:
				bid := uint16(q.Flags >> 16)
				_, done, err := cn.s.Feed(br.Buf(bid, int(q.Res)))
				br.Give(bid)
				gave = true
				if err != nil {
					cqErr = err
					return
				}
				if done {
					if cn.s.Resp.Status != 200 {
						fails++
					}
					hist.Record(now.Sub(cn.sent))
					n++
					cn.s.Reset(false, false)
					if issuing {
						send(i, now)
					} else {
						inflight--
					}
				}
				if q.Flags&uring.CQEFMore == 0 {
					recv(i)
				}
			case q.Res == -int32(unix.ENOBUFS):
				recv(i)
			default:
				cqErr = fmt.Errorf("recv on conn %d: res %d flags %#x", i, q.Res, q.Flags)
			}
		})
		if gave {
			br.Publish()
		}
		if cqErr != nil {
			return cqErr
		}
	}
	el := time.Since(start)
	if sqpoll >= 0 { // is the kernel thread one of ours, and its CPU?
		ents, _ := os.ReadDir("/proc/self/task")
		for _, e := range ents {
			comm, _ := os.ReadFile("/proc/self/task/" + e.Name() + "/comm")
			stat, _ := os.ReadFile("/proc/self/task/" + e.Name() + "/stat")
			if len(comm) > 4 && string(comm[:4]) == "iou-" {
				fmt.Fprintf(os.Stderr, "thread %s %q stat %s", e.Name(), comm, stat)
			}
		}
	}
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &ru)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	fmt.Printf("requests %d fails %d in %v: %.0f req/s, cpu %v, %.2f us/req, %.3f switches/req, %.3f enters/req, p50 %v p99 %v\n",
		n, fails, el.Round(time.Millisecond), float64(n)/el.Seconds(), cpu.Round(time.Millisecond),
		float64(cpu.Microseconds())/float64(n), float64(ru.Nvcsw+ru.Nivcsw)/float64(n), float64(enters)/float64(n),
		hist.Quantile(0.5), hist.Quantile(0.99))
	return nil
}
