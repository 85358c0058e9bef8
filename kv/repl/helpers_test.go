package repl_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"
)

// proxy is a TCP proxy on 127.0.0.1:0 that the test can cut (close every
// connection and refuse new ones), slow down (a delay before each chunk
// from the leader) and point at a restarted leader.
type proxy struct {
	ln     net.Listener
	mu     sync.Mutex
	target string
	down   bool
	delay  time.Duration
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
	closed bool
}

func newProxy(target string) (*proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) set(fn func(p *proxy)) {
	p.mu.Lock()
	fn(p)
	p.mu.Unlock()
}

// cut closes every open connection; with down, new ones are refused too.
func (p *proxy) cut(down bool) {
	p.mu.Lock()
	p.down = down
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
}

func (p *proxy) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.ln.Close()
	p.cut(true)
	p.wg.Wait()
}

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.down || p.closed {
			p.mu.Unlock()
			c.Close()
			continue
		}
		target := p.target
		p.mu.Unlock()
		up, err := net.DialTimeout("tcp", target, time.Second)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns[c], p.conns[up] = struct{}{}, struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(up, c, false)
		go p.pipe(c, up, true)
	}
}

// pipe copies src to dst; slow applies the delay (the leader's side).
func (p *proxy) pipe(dst, src net.Conn, slow bool) {
	defer p.wg.Done()
	defer func() {
		dst.Close()
		src.Close()
		p.mu.Lock()
		delete(p.conns, dst)
		delete(p.conns, src)
		p.mu.Unlock()
	}()
	buf := make([]byte, 4096) // small chunks: a slow link stays slow
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if slow {
				p.mu.Lock()
				d := p.delay
				p.mu.Unlock()
				time.Sleep(d)
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// rclient is a minimal RESP client: commands as multibulk arrays,
// replies as Go values (string, int64, nil, []any, respErr).
type rclient struct {
	c  net.Conn
	br *bufio.Reader
}

type respErr string

func (e respErr) Error() string { return string(e) }

func rdial(addr string) (*rclient, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return nil, err
	}
	return &rclient{c: c, br: bufio.NewReader(c)}, nil
}

func (r *rclient) send(args ...string) error {
	b := fmt.Appendf(nil, "*%d\r\n", len(args))
	for _, a := range args {
		b = fmt.Appendf(b, "$%d\r\n%s\r\n", len(a), a)
	}
	r.c.SetDeadline(time.Now().Add(10 * time.Second))
	_, err := r.c.Write(b)
	return err
}

func (r *rclient) do(args ...string) (any, error) {
	if err := r.send(args...); err != nil {
		return nil, err
	}
	return r.read()
}

func (r *rclient) read() (any, error) {
	line, err := r.br.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 {
		return nil, errors.New("short reply line")
	}
	body := line[1 : len(line)-2]
	switch line[0] {
	case '+':
		return body, nil
	case '-':
		return nil, respErr(body)
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return nil, err
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(r.br, b); err != nil {
			return nil, err
		}
		return string(b[:n]), nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return nil, err
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = r.read(); err != nil {
				var re respErr
				if !errors.As(err, &re) {
					return nil, err
				}
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("unexpected reply %q", line)
}

func (r *rclient) close() { r.c.Close() }
