package resp

import (
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/tidwall/redcon"

	"github.com/wirebench/wirebench/kv"
	"github.com/wirebench/wirebench/kv/access"
)

// Engines: an event loop of ours (the default on Linux, loop_linux.go),
// our reader with a goroutine per connection, or tidwall/redcon; the same
// commands behind all three.
const (
	EngineLoop   = "loop"
	EngineOwn    = "own"
	EngineRedcon = "redcon"
)

// DefaultMaxConns is redis-server's maxclients.
const DefaultMaxConns = 10000

// flushAt bounds the replies buffered for one connection while a pipeline
// is executed: past it they are sent before the next command.
const flushAt = 64 << 10

// Options configures a Server.
type Options struct {
	Engine   string // EngineLoop, EngineOwn or EngineRedcon; "" is EngineLoop on Linux, else EngineOwn
	MaxConns int    // DefaultMaxConns when 0; more are refused with Redis's error
	Guard    Guard  // access control and replication (guard.go)
}

// Server serves a Store over RESP.
type Server struct {
	st     *kv.Store
	opts   Options
	ln     net.Listener
	conns  atomic.Int64
	nextID atomic.Int64
	// commands is INFO's total_commands_processed, less what sessions
	// ran since their last batch of replies (Session.cmds).
	commands atomic.Int64
	mu       sync.Mutex
	open     map[net.Conn]struct{}
	closed   bool
	wg       sync.WaitGroup
	rc       *redcon.Server
	loops    []*loop // EngineLoop's
	err      chan error
}

// Listen starts serving st on addr ("127.0.0.1:0" picks a port).
func Listen(addr string, st *kv.Store, o Options) (*Server, error) {
	if o.Engine == "" {
		o.Engine = defaultEngine
	}
	if o.Engine != EngineLoop && o.Engine != EngineOwn && o.Engine != EngineRedcon {
		return nil, fmt.Errorf("resp: unknown engine %q (want %s, %s or %s)", o.Engine, EngineLoop, EngineOwn, EngineRedcon)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("resp: listen: %w", err)
	}
	s := &Server{st: st, opts: o, ln: ln, open: map[net.Conn]struct{}{}, err: make(chan error, 1)}
	if o.Engine == EngineRedcon {
		s.serveRedcon()
		return s, nil
	}
	if o.Engine == EngineLoop {
		if err := s.startLoops(loopCount()); err != nil {
			ln.Close()
			return nil, err
		}
	}
	s.wg.Add(1)
	go s.acceptLoop()
	return s, nil
}

// loopCount is one event loop per P, but no more than the CPUs the
// process may run on: serve gives a server on one CPU two Ps (for
// HTTP's sake), and two loops on one CPU split the connections and
// the AOF's batches in two: under Zipf SET -P 1 at always, 33-37 us of
// server CPU and 0.41-0.51 context switches a request against 24-26 us
// and 0.15-0.20 with one loop (scripts/kv-zipf-vs-redis.sh, docs/kv.md).
func loopCount() int {
	return max(1, min(runtime.GOMAXPROCS(0), runtime.NumCPU()))
}

func (s *Server) maxConns() int {
	if s.opts.MaxConns > 0 {
		return s.opts.MaxConns
	}
	return DefaultMaxConns
}

// Addr is the listening address.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops listening and closes every connection.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	for c := range s.open {
		c.Close()
	}
	for _, l := range s.loops {
		l.stop()
	}
	s.mu.Unlock()
	var err error
	if s.rc != nil {
		err = s.rc.Close()
	} else {
		err = s.ln.Close()
	}
	s.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

func (s *Server) newSession() *Session {
	return &Session{st: s.st, srv: s, id: s.nextID.Add(1), r: reply{b: make([]byte, 0, 4096)}}
}

// admit counts a connection in; false (after Redis's error) past the limit.
func (s *Server) admit(c net.Conn) bool {
	if s.conns.Add(1) > int64(s.maxConns()) {
		s.conns.Add(-1)
		c.Write([]byte("-ERR max number of clients reached\r\n"))
		c.Close()
		return false
	}
	return true
}

func (s *Server) acceptLoop() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				s.err <- err
			}
			return
		}
		if !s.admit(c) {
			continue
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		if s.loops != nil {
			s.mu.Unlock()
			s.handOff(c)
			continue
		}
		s.open[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Add(1)
		go s.serveConn(c)
	}
}

// serveConn runs one connection: it executes every complete command in
// what one read brought (a pipeline), waits once for the AOF to
// acknowledge the writes among them, then sends all their replies.
func (s *Server) serveConn(c net.Conn) {
	defer func() {
		s.mu.Lock()
		delete(s.open, c)
		s.mu.Unlock()
		c.Close()
		s.conns.Add(-1)
		s.wg.Done()
	}()
	sess := s.newSession()
	sess.client = access.ClientOf(c.RemoteAddr().String()) // the rate limit's key
	rd := reqReader{buf: make([]byte, 16<<10)}
	for {
		if !rd.room() {
			c.Write([]byte(errQueryLimit))
			return
		}
		n, err := c.Read(rd.buf[rd.w:])
		rd.w += n
		for {
			args, perr := rd.next()
			if perr != nil {
				sess.finish()
				sess.r.err(perr.Error())
				c.Write(sess.r.b)
				return
			}
			if args == nil {
				break
			}
			if !sess.Exec(args) {
				sess.finish()
				c.Write(sess.r.b)
				return
			}
			if len(sess.r.b) >= flushAt {
				if !s.send(c, sess) {
					return
				}
			}
		}
		if len(sess.r.b) > 0 && !s.send(c, sess) {
			return
		}
		if err != nil {
			return
		}
	}
}

func (s *Server) send(c net.Conn, sess *Session) bool {
	sess.finish()
	_, err := c.Write(sess.r.b)
	if cap(sess.r.b) > 1<<20 {
		sess.r.b = make([]byte, 0, 4096) // do not keep a huge reply's buffer
	}
	sess.r.b = sess.r.b[:0]
	return err == nil
}

// finish waits for the AOF to acknowledge this batch's writes (one wait
// for the last: writes are settled in order) and turns the replies of
// writes it refused into errors.
func (sess *Session) finish() {
	if sess.cmds != 0 {
		sess.srv.commands.Add(sess.cmds)
		sess.cmds = 0
	}
	if len(sess.ticks) == 0 {
		return
	}
	last := sess.ticks[len(sess.ticks)-1].t
	for _, p := range sess.ticks {
		last = max(last, p.t)
	}
	wait := sess.st.Wait
	if sess.gathered {
		wait = sess.st.WaitGathered
	}
	if err := wait(last); err != nil {
		var out []byte
		prev := 0
		for _, p := range sess.ticks {
			if werr := sess.st.Wait(p.t); werr != nil {
				out = append(out, sess.r.b[prev:p.start]...)
				out = append(out, '-')
				out = append(out, errMisconf+sanitize(werr.Error())...)
				out = append(out, '\r', '\n')
				prev = p.end
			}
		}
		sess.r.b = append(out, sess.r.b[prev:]...)
	}
	sess.ticks = sess.ticks[:0]
}

// serveRedcon serves with tidwall/redcon instead of our reader, for the
// comparison in the README; the commands are the same Session.Exec.
func (s *Server) serveRedcon() {
	s.rc = redcon.NewServerNetwork("tcp", "", func(conn redcon.Conn, cmd redcon.Command) {
		sess := conn.Context().(*Session)
		if !sess.Exec(cmd.Args) {
			sess.finish()
			conn.WriteRaw(sess.r.b)
			sess.r.b = sess.r.b[:0]
			conn.Close()
			return
		}
		// redcon calls us per command and flushes after the last one of
		// a read: wait for the AOF once, at the last.
		if len(conn.PeekPipeline()) == 0 || len(sess.r.b) >= flushAt {
			sess.finish()
			conn.WriteRaw(sess.r.b)
			sess.r.b = sess.r.b[:0]
		}
	}, func(conn redcon.Conn) bool {
		if s.conns.Add(1) > int64(s.maxConns()) {
			s.conns.Add(-1)
			conn.WriteError("ERR max number of clients reached")
			return false
		}
		sess := s.newSession()
		sess.client = access.ClientOf(conn.RemoteAddr())
		conn.SetContext(sess)
		return true
	}, func(conn redcon.Conn, err error) {
		s.conns.Add(-1)
	})
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.rc.Serve(s.ln); err != nil && !errors.Is(err, net.ErrClosed) {
			s.err <- err
		}
	}()
}

// Err returns the accept loop's error, if it failed.
func (s *Server) Err() error {
	select {
	case err := <-s.err:
		return err
	default:
		return nil
	}
}
