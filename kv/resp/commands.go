// Package resp serves a kv.Store over RESP2 and RESP3, the Redis
// protocol: the commands of issue 12 with redis-server's replies and error
// texts, pipelining, and acknowledgements that wait for the AOF policy.
package resp

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/wirebench/wirebench/kv"
)

// Session is one client connection's state: protocol version and name.
// Exec runs commands against the shared store.
type Session struct {
	st    *kv.Store
	srv   *Server
	id    int64
	name  string
	r     reply
	quit  bool
	ticks []pending // writes awaiting the AOF in this batch of replies
	// client is the remote IP (the rate limit's key); authed is set by
	// AUTH or HELLO AUTH when a password is required (guard.go).
	client string
	authed bool
	// cmds counts the commands run since the last finish, which adds
	// them to the server's total: one shared atomic per batch of replies,
	// not per command.
	cmds int64
	// gathered: the event loop runs this session, and a pass has read
	// every ready connection before it waits for the AOF, so its wait
	// leads the group commit without yielding (kv.Store.WaitGathered).
	gathered bool
}

// pending is a reply that must become an error if its write is undone.
type pending struct {
	start, end int
	t          kv.Ticket
}

type command struct {
	name  string
	arity int // Redis's: n exactly, -n at least n (the name counts)
	run   func(s *Session, args [][]byte) kv.Ticket
}

// commands maps each command's lower-case name to it, made on first
// use: made at init, the map was 3 kB of live heap in every process of
// the one binary, servers that never speak RESP included, which their
// GC marks on every cycle (docs/grpc.md, "Three ways").
func commands() map[string]*command {
	commandsOnce.Do(func() {
		list := []*command{
			{"ping", -1, cmdPing}, {"echo", 2, cmdEcho}, {"hello", -1, cmdHello},
			{"auth", -2, cmdAuth}, {"select", 2, cmdSelect}, {"client", -2, cmdClient},
			{"quit", -1, cmdQuit},
			&cmdGetC, &cmdSetC, {"getdel", 2, cmdGetDel},
			{"append", 3, cmdAppend}, {"strlen", 2, cmdStrlen},
			{"incr", 2, cmdIncr}, {"decr", 2, cmdDecr}, {"incrby", 3, cmdIncrBy}, {"decrby", 3, cmdDecrBy},
			{"del", -2, cmdDel}, {"unlink", -2, cmdDel}, {"exists", -2, cmdExists}, {"type", 2, cmdType},
			{"mget", -2, cmdMGet}, {"mset", -3, cmdMSet},
			{"expire", -3, cmdExpire}, {"pexpire", -3, cmdPExpire},
			{"persist", 2, cmdPersist}, {"ttl", 2, cmdTTL}, {"pttl", 2, cmdPTTL},
			{"scan", -2, cmdScan}, {"keys", 2, cmdKeys}, {"dbsize", 1, cmdDBSize},
			{"flushall", -1, cmdFlushAll}, {"flushdb", -1, cmdFlushAll},
			{"info", -1, cmdInfo}, {"config", -2, cmdConfig}, {"command", -1, cmdCommand},
			{"bgrewriteaof", 1, cmdBgRewriteAOF},
		}
		commandMap = make(map[string]*command, len(list))
		for _, c := range list {
			commandMap[c.name] = c
		}
	})
	return commandMap
}

var (
	commandsOnce sync.Once
	commandMap   map[string]*command
)

// maxNameLen is the longest command name we look up; longer ones are
// unknown without lowering them.
const maxNameLen = 16

// GET and SET, the commands of every benchmark, skip the map's hashing
// (5% of a pipelined GET's CPU).
var (
	cmdGetC          = command{"get", 2, cmdGet}
	cmdSetC          = command{"set", -3, cmdSet}
	cmdGetP, cmdSetP = &cmdGetC, &cmdSetC
)

// lookup finds a lower-cased command name.
func lookup(low []byte) *command {
	if len(low) == 3 && low[1] == 'e' && low[2] == 't' {
		switch low[0] {
		case 'g':
			return cmdGetP
		case 's':
			return cmdSetP
		}
	}
	return commands()[string(low)]
}

// Exec runs one command and appends its reply. It returns false when the
// client asked to close (QUIT).
func (s *Session) Exec(args [][]byte) bool {
	if len(args) == 0 {
		return true
	}
	if !s.srv.opts.Guard.Limiter.Allow(s.client) { // unknown commands count too
		s.r.err(ErrRateLimited)
		return true
	}
	var low [maxNameLen]byte
	var c *command
	if n := len(args[0]); n <= maxNameLen {
		for i, ch := range args[0] {
			if 'A' <= ch && ch <= 'Z' {
				ch += 'a' - 'A'
			}
			low[i] = ch
		}
		c = lookup(low[:n])
	}
	if c == nil {
		s.unknown(args)
		return true
	}
	if (c.arity > 0 && len(args) != c.arity) || (c.arity < 0 && len(args) < -c.arity) {
		s.r.err("ERR wrong number of arguments for '" + c.name + "' command")
		return true
	}
	if !s.admit(c) {
		return true
	}
	start := len(s.r.b)
	t := c.run(s, args)
	if t != 0 {
		s.ticks = append(s.ticks, pending{start, len(s.r.b), t})
	}
	s.cmds++ // after it ran, as Redis's call(): not unknown, refused or rate-limited ones
	return !s.quit
}

func (s *Session) unknown(args [][]byte) {
	var b strings.Builder
	b.WriteString("ERR unknown command '")
	b.WriteString(clip(args[0], 128))
	b.WriteString("', with args beginning with: ")
	for _, a := range args[1:] {
		if b.Len() >= 128 { // Redis stops adding arguments past 128 bytes
			break
		}
		b.WriteString("'")
		b.WriteString(clip(a, 128-b.Len()))
		b.WriteString("' ")
	}
	s.r.err(sanitize(b.String()))
}

func clip(b []byte, n int) string {
	if n < 0 {
		n = 0
	}
	if len(b) > n {
		b = b[:n]
	}
	return string(b)
}

// sanitize keeps an error line one line, as Redis does.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' {
			return ' '
		}
		return r
	}, s)
}

// Errors of Redis that commands share.
const (
	errSyntax    = "ERR syntax error"
	errNotInt    = "ERR value is not an integer or out of range"
	errOverflow  = "ERR increment or decrement would overflow"
	errMisconf   = "MISCONF Errors writing to the AOF file: "
	errKeyTooBig = "ERR key length must be 1..1024 bytes"
	errValTooBig = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
)

// storeErr turns a store error into Redis's reply.
func (s *Session) storeErr(err error) {
	switch {
	case errors.Is(err, kv.ErrNotInteger):
		s.r.err(errNotInt)
	case errors.Is(err, kv.ErrOverflow):
		s.r.err(errOverflow)
	case errors.Is(err, kv.ErrKeyLen):
		s.r.err(errKeyTooBig)
	case errors.Is(err, kv.ErrValueLen):
		s.r.err(errValTooBig)
	case errors.Is(err, kv.ErrDurability), errors.Is(err, kv.ErrClosed):
		s.r.err(errMisconf + sanitize(err.Error()))
	default:
		s.r.err("ERR " + sanitize(err.Error()))
	}
}

func eq(b []byte, s string) bool { return strings.EqualFold(string(b), s) }

func cmdGet(s *Session, args [][]byte) kv.Ticket {
	v, _, ok := s.st.GetBytes(args[1])
	if !ok {
		s.r.null()
		return 0
	}
	s.r.bulk(v)
	return 0
}

// parseSet reads SET's options as Redis 7.0 does.
func (s *Session) parseSet(args [][]byte) (kv.SetOpts, bool) {
	var o kv.SetOpts
	var haveExp bool
	now := s.st.Now()
	for i := 3; i < len(args); i++ {
		a := args[i]
		switch {
		case eq(a, "nx") && !o.XX:
			o.NX = true
		case eq(a, "xx") && !o.NX:
			o.XX = true
		case eq(a, "get"):
			o.Get = true
		case eq(a, "keepttl") && !haveExp:
			o.KeepTTL = true
		case (eq(a, "ex") || eq(a, "px") || eq(a, "exat") || eq(a, "pxat")) && !haveExp && !o.KeepTTL && i+1 < len(args):
			n, err := kv.ParseInt(args[i+1])
			if err != nil {
				s.r.err(errNotInt)
				return o, false
			}
			exp, ok := absExpiry(a, n, now)
			if !ok {
				s.r.err("ERR invalid expire time in 'set' command")
				return o, false
			}
			o.Exp, haveExp = exp, true
			i++
		default:
			s.r.err(errSyntax)
			return o, false
		}
	}
	return o, true
}

// absExpiry converts SET's EX/PX/EXAT/PXAT argument to Unix ms; Redis
// refuses values <= 0 and ones that overflow.
func absExpiry(unit []byte, n, now int64) (int64, bool) {
	if n <= 0 {
		return 0, false
	}
	switch {
	case eq(unit, "ex"):
		if n > (math.MaxInt64-now)/1000 {
			return 0, false
		}
		return now + n*1000, true
	case eq(unit, "px"):
		if n > math.MaxInt64-now {
			return 0, false
		}
		return now + n, true
	case eq(unit, "exat"):
		if n > math.MaxInt64/1000 {
			return 0, false
		}
		return n * 1000, true
	}
	return n, true // pxat
}

func cmdSet(s *Session, args [][]byte) kv.Ticket {
	o, ok := s.parseSet(args)
	if !ok {
		return 0
	}
	res, t, err := s.st.Set(string(args[1]), args[2], o)
	if err != nil {
		s.storeErr(err)
		return 0
	}
	switch {
	case o.Get && res.HadOld:
		s.r.bulk(res.Old)
	case o.Get, !res.Done:
		s.r.null()
	default:
		s.r.ok()
	}
	return t
}

func cmdGetDel(s *Session, args [][]byte) kv.Ticket {
	v, ok, t, err := s.st.GetDel(string(args[1]))
	switch {
	case err != nil:
		s.storeErr(err)
	case !ok:
		s.r.null()
	default:
		s.r.bulk(v)
	}
	return t
}

func cmdAppend(s *Session, args [][]byte) kv.Ticket {
	n, t, err := s.st.Append(string(args[1]), args[2])
	if err != nil {
		s.storeErr(err)
		return 0
	}
	s.r.int(int64(n))
	return t
}

func cmdStrlen(s *Session, args [][]byte) kv.Ticket {
	v, _, _ := s.st.Get(string(args[1]))
	s.r.int(int64(len(v)))
	return 0
}

func (s *Session) incr(key []byte, d int64) kv.Ticket {
	n, t, err := s.st.IncrBy(string(key), d)
	if err != nil {
		s.storeErr(err)
		return 0
	}
	s.r.int(n)
	return t
}

func cmdIncr(s *Session, args [][]byte) kv.Ticket { return s.incr(args[1], 1) }
func cmdDecr(s *Session, args [][]byte) kv.Ticket { return s.incr(args[1], -1) }

func cmdIncrBy(s *Session, args [][]byte) kv.Ticket {
	d, err := kv.ParseInt(args[2])
	if err != nil {
		s.r.err(errNotInt)
		return 0
	}
	return s.incr(args[1], d)
}

func cmdDecrBy(s *Session, args [][]byte) kv.Ticket {
	d, err := kv.ParseInt(args[2])
	if err != nil || d == math.MinInt64 {
		if err == nil {
			s.r.err("ERR decrement would overflow")
			return 0
		}
		s.r.err(errNotInt)
		return 0
	}
	return s.incr(args[1], -d)
}

func keysOf(args [][]byte) []string {
	ks := make([]string, len(args))
	for i, a := range args {
		ks[i] = string(a)
	}
	return ks
}

func cmdDel(s *Session, args [][]byte) kv.Ticket {
	n, t, err := s.st.Del(keysOf(args[1:])...)
	if err != nil {
		s.storeErr(err)
		return t
	}
	s.r.int(int64(n))
	return t
}

func cmdExists(s *Session, args [][]byte) kv.Ticket {
	n := 0
	for _, k := range args[1:] {
		if s.st.Exists(string(k)) {
			n++
		}
	}
	s.r.int(int64(n))
	return 0
}

func cmdType(s *Session, args [][]byte) kv.Ticket {
	if s.st.Exists(string(args[1])) {
		s.r.simple("string")
	} else {
		s.r.simple("none")
	}
	return 0
}

func cmdMGet(s *Session, args [][]byte) kv.Ticket {
	s.r.array(len(args) - 1)
	for _, k := range args[1:] {
		if v, _, ok := s.st.GetBytes(k); ok {
			s.r.bulk(v)
		} else {
			s.r.null()
		}
	}
	return 0
}

func cmdMSet(s *Session, args [][]byte) kv.Ticket {
	if len(args)%2 == 0 {
		s.r.err("ERR wrong number of arguments for 'mset' command")
		return 0
	}
	items := make([]kv.Item, 0, len(args)/2)
	for i := 1; i < len(args); i += 2 {
		items = append(items, kv.Item{Key: string(args[i]), Val: args[i+1]})
	}
	t, err := s.st.MSet(items)
	if err != nil {
		s.storeErr(err)
		return 0
	}
	s.r.ok()
	return t
}

func (s *Session) expire(args [][]byte, unit int64, name string) kv.Ticket {
	n, err := kv.ParseInt(args[2])
	if err != nil {
		s.r.err(errNotInt)
		return 0
	}
	cond := kv.ExpireAlways
	var nx, xx, gt, lt bool
	for _, a := range args[3:] {
		switch {
		case eq(a, "nx"):
			nx = true
		case eq(a, "xx"):
			xx = true
		case eq(a, "gt"):
			gt = true
		case eq(a, "lt"):
			lt = true
		default:
			s.r.err("ERR Unsupported option " + sanitize(string(a)))
			return 0
		}
	}
	switch {
	case nx && (xx || gt || lt):
		s.r.err("ERR NX and XX, GT or LT options at the same time are not compatible")
		return 0
	case gt && lt:
		s.r.err("ERR GT and LT options at the same time are not compatible")
		return 0
	case nx:
		cond = kv.ExpireNX
	case xx:
		cond = kv.ExpireXX
	}
	if gt {
		cond = kv.ExpireGT
	} else if lt {
		cond = kv.ExpireLT
	}
	now := s.st.Now()
	if n > math.MaxInt64/unit || n < math.MinInt64/unit || (n > 0 && n*unit > math.MaxInt64-now) {
		s.r.err("ERR invalid expire time in '" + name + "' command")
		return 0
	}
	exp := now + n*unit
	if exp <= 0 {
		exp = now // in the past: delete
	}
	ok, t, err := s.st.ExpireAt(string(args[1]), exp, cond)
	if err != nil {
		s.storeErr(err)
		return 0
	}
	s.r.int(b2i(ok))
	return t
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func cmdExpire(s *Session, args [][]byte) kv.Ticket  { return s.expire(args, 1000, "expire") }
func cmdPExpire(s *Session, args [][]byte) kv.Ticket { return s.expire(args, 1, "pexpire") }

func cmdPersist(s *Session, args [][]byte) kv.Ticket {
	ok, t, err := s.st.Persist(string(args[1]))
	if err != nil {
		s.storeErr(err)
		return 0
	}
	s.r.int(b2i(ok))
	return t
}

func (s *Session) ttl(key []byte, ms bool) {
	_, exp, ok := s.st.Get(string(key))
	switch {
	case !ok:
		s.r.int(-2)
	case exp == 0:
		s.r.int(-1)
	case ms:
		s.r.int(max(exp-s.st.Now(), 0))
	default:
		s.r.int(max((exp-s.st.Now()+500)/1000, 0)) // Redis rounds
	}
}

func cmdTTL(s *Session, args [][]byte) kv.Ticket  { s.ttl(args[1], false); return 0 }
func cmdPTTL(s *Session, args [][]byte) kv.Ticket { s.ttl(args[1], true); return 0 }

func cmdFlushAll(s *Session, args [][]byte) kv.Ticket {
	if len(args) > 2 || (len(args) == 2 && !eq(args[1], "async") && !eq(args[1], "sync")) {
		s.r.err(errSyntax)
		return 0
	}
	t, err := s.st.FlushAll()
	if err != nil {
		s.storeErr(err)
		return 0
	}
	s.r.ok()
	return t
}

func cmdBgRewriteAOF(s *Session, args [][]byte) kv.Ticket {
	if _, err := s.st.Rewrite(); err != nil {
		if errors.Is(err, kv.ErrRewriteBusy) {
			s.r.err("ERR Background append only file rewriting already in progress")
			return 0
		}
		s.r.err("ERR " + sanitize(err.Error()))
		return 0
	}
	s.r.simple("Background append only file rewriting started")
	return 0
}

var _ = fmt.Sprint
