package resp

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/wirebench/wirebench/kv"
)

// Version is the Redis version we answer as: the replies and errors are
// redis-server 7.0's.
const Version = "7.0.15"

func cmdPing(s *Session, args [][]byte) kv.Ticket {
	switch len(args) {
	case 1:
		s.r.simple("PONG")
	case 2:
		s.r.bulk(args[1])
	default:
		s.r.err("ERR wrong number of arguments for 'ping' command")
	}
	return 0
}

func cmdEcho(s *Session, args [][]byte) kv.Ticket { s.r.bulk(args[1]); return 0 }

func cmdQuit(s *Session, args [][]byte) kv.Ticket { s.r.ok(); s.quit = true; return 0 }

const errNoPass = "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"

func cmdAuth(s *Session, args [][]byte) kv.Ticket {
	switch len(args) {
	case 2:
		if s.srv.opts.Guard.Password == "" {
			s.r.err(errNoPass)
		} else if s.auth([]byte("default"), args[1]) {
			s.r.ok()
		} else {
			s.r.err("WRONGPASS invalid username-password pair or user is disabled.")
		}
	case 3:
		if s.auth(args[1], args[2]) {
			s.r.ok()
		} else {
			s.r.err("WRONGPASS invalid username-password pair or user is disabled.")
		}
	default:
		s.r.err(errSyntax)
	}
	return 0
}

func cmdHello(s *Session, args [][]byte) kv.Ticket {
	proto := int64(2)
	if s.r.resp3 {
		proto = 3
	}
	i := 1
	if len(args) > 1 {
		n, err := kv.ParseInt(args[1])
		if err != nil {
			s.r.err("ERR Protocol version is not an integer or out of range")
			return 0
		}
		if n < 2 || n > 3 {
			s.r.err("NOPROTO unsupported protocol version")
			return 0
		}
		proto, i = n, 2
	}
	name, setName := "", false
	for ; i < len(args); i++ {
		more := len(args) - i - 1
		switch {
		case eq(args[i], "auth") && more >= 2:
			if !s.auth(args[i+1], args[i+2]) {
				s.r.err("WRONGPASS invalid username-password pair or user is disabled.")
				return 0
			}
			i += 2
		case eq(args[i], "setname") && more >= 1:
			if !validName(args[i+1]) {
				s.r.err("ERR Client names cannot contain spaces, newlines or special characters.")
				return 0
			}
			name, setName = string(args[i+1]), true
			i++
		default:
			s.r.err("ERR Syntax error in HELLO option '" + sanitize(string(args[i])) + "'")
			return 0
		}
	}
	if s.srv.opts.Guard.Password != "" && !s.authed {
		s.r.err("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time")
		return 0
	}
	if setName {
		s.name = name
	}
	s.r.resp3 = proto == 3
	s.r.mapHead(7)
	s.r.bulkString("server")
	s.r.bulkString("redis")
	s.r.bulkString("version")
	s.r.bulkString(Version)
	s.r.bulkString("proto")
	s.r.int(proto)
	s.r.bulkString("id")
	s.r.int(s.id)
	s.r.bulkString("mode")
	s.r.bulkString("standalone")
	s.r.bulkString("role")
	s.r.bulkString(s.role())
	s.r.bulkString("modules")
	s.r.array(0)
	return 0
}

func cmdSelect(s *Session, args [][]byte) kv.Ticket {
	n, err := kv.ParseInt(args[1])
	switch {
	case err != nil:
		s.r.err(errNotInt)
	case n != 0: // one database: Redis's cluster mode answers the same
		s.r.err("ERR DB index is out of range")
	default:
		s.r.ok()
	}
	return 0
}

func validName(b []byte) bool {
	for _, c := range b {
		if c < '!' || c > '~' {
			return false
		}
	}
	return true
}

func cmdClient(s *Session, args [][]byte) kv.Ticket {
	sub := strings.ToLower(string(args[1]))
	switch {
	case sub == "setname" && len(args) == 3:
		if !validName(args[2]) {
			s.r.err("ERR Client names cannot contain spaces, newlines or special characters.")
			return 0
		}
		s.name = string(args[2])
		s.r.ok()
	case sub == "getname" && len(args) == 2:
		if s.name == "" {
			s.r.null()
		} else {
			s.r.bulkString(s.name)
		}
	case sub == "id" && len(args) == 2:
		s.r.int(s.id)
	case sub == "setinfo" && len(args) == 4:
		// go-redis sends its library name and version; nothing to keep.
		s.r.ok()
	case sub == "info" && len(args) == 2:
		s.r.verbatim(fmt.Sprintf("id=%d addr=? name=%s db=0 resp=%d\n", s.id, s.name, 2+b2i(s.r.resp3)))
	case sub == "setname" || sub == "getname" || sub == "id" || sub == "setinfo" || sub == "info":
		s.r.err("ERR wrong number of arguments for 'client|" + sub + "' command")
	default:
		s.r.err("ERR unknown subcommand '" + sanitize(clip(args[1], 128)) + "'. Try CLIENT HELP.")
	}
	return 0
}

func cmdDBSize(s *Session, args [][]byte) kv.Ticket { s.r.int(int64(s.st.Len())); return 0 }

// cmdScan: the cursor is a shard index; each call returns whole shards
// until COUNT keys are gathered (COUNT is a hint in Redis too), so every
// key present for the whole iteration is returned at least once.
func cmdScan(s *Session, args [][]byte) kv.Ticket {
	cur, err := strconv.ParseUint(string(args[1]), 10, 64)
	if err != nil {
		s.r.err("ERR invalid cursor")
		return 0
	}
	count, pattern := int64(10), []byte(nil)
	for i := 2; i < len(args); i += 2 {
		if i+1 >= len(args) {
			s.r.err(errSyntax)
			return 0
		}
		switch {
		case eq(args[i], "count"):
			n, err := kv.ParseInt(args[i+1])
			if err != nil {
				s.r.err(errNotInt)
				return 0
			}
			if n < 1 {
				s.r.err(errSyntax)
				return 0
			}
			count = n
		case eq(args[i], "match"):
			pattern = args[i+1]
		case eq(args[i], "type"):
			if !eq(args[i+1], "string") {
				pattern = []byte{} // no key has another type: match nothing
				count = max(count, kv.NumShards)
			}
		default:
			s.r.err(errSyntax)
			return 0
		}
	}
	var keys []string
	next := cur
	for next < kv.NumShards && int64(len(keys)) < count {
		s.st.ScanShards(int(next), int(next)+1, func(k string) bool {
			if pattern == nil || match(pattern, []byte(k)) {
				keys = append(keys, k)
			}
			return true
		})
		next++
	}
	if next >= kv.NumShards {
		next = 0
	}
	s.r.array(2)
	s.r.bulkString(strconv.FormatUint(next, 10))
	s.r.array(len(keys))
	for _, k := range keys {
		s.r.bulkString(k)
	}
	return 0
}

func cmdKeys(s *Session, args [][]byte) kv.Ticket {
	var keys []string
	s.st.Keys(func(k string) bool {
		if match(args[1], []byte(k)) {
			keys = append(keys, k)
		}
		return true
	})
	slices.Sort(keys) // Redis's order is its hash table's; ours is at least stable
	s.r.array(len(keys))
	for _, k := range keys {
		s.r.bulkString(k)
	}
	return 0
}

// configParams are the parameters CONFIG GET knows (redis-benchmark and
// clients ask for some of them). Without an AOF, appendfsync is "no":
// redis-server answers its configured default (everysec) even with
// appendonly no, but nothing is written or fsynced here, and a tool that
// reads only appendfsync must not conclude that writes reach the disk
// every second. "no" is a value Redis clients know.
func (s *Session) configParams() [][2]string {
	in := s.st.Info()
	aof, fsync := "no", "no"
	if in.Policy != "" {
		aof, fsync = "yes", string(in.Policy)
	}
	return [][2]string{
		{"appendonly", aof}, {"appendfsync", fsync}, {"save", ""},
		{"databases", "1"}, {"maxmemory", "0"}, {"maxclients", strconv.Itoa(s.srv.maxConns())},
		{"proto-max-bulk-len", strconv.Itoa(kv.MaxValueLen)}, {"timeout", "0"},
	}
}

func cmdConfig(s *Session, args [][]byte) kv.Ticket {
	sub := strings.ToLower(string(args[1]))
	switch sub {
	case "get":
		if len(args) < 3 {
			s.r.err("ERR wrong number of arguments for 'config|get' command")
			return 0
		}
		var out [][2]string
		for _, p := range s.configParams() {
			for _, pat := range args[2:] {
				if match(pat, []byte(p[0])) {
					out = append(out, p)
					break
				}
			}
		}
		s.r.mapHead(len(out))
		for _, p := range out {
			s.r.bulkString(p[0])
			s.r.bulkString(p[1])
		}
	case "set", "resetstat", "rewrite":
		s.r.err("ERR CONFIG " + strings.ToUpper(sub) + " is not supported by wirebench (start-up flags configure it)")
	default:
		s.r.err("ERR unknown subcommand '" + sanitize(clip(args[1], 128)) + "'. Try CONFIG HELP.")
	}
	return 0
}

func cmdCommand(s *Session, args [][]byte) kv.Ticket {
	if len(args) == 1 {
		names := make([]string, 0, len(commands()))
		for n := range commands() {
			names = append(names, n)
		}
		slices.Sort(names)
		s.r.array(len(names))
		for _, n := range names {
			s.commandInfo(commands()[n])
		}
		return 0
	}
	switch strings.ToLower(string(args[1])) {
	case "count":
		s.r.int(int64(len(commands())))
	case "docs":
		// redis-cli asks for docs to show hints; it copes with none.
		s.r.mapHead(0)
	case "info":
		s.r.array(len(args) - 2)
		for _, a := range args[2:] {
			if c := commands()[strings.ToLower(string(a))]; c != nil {
				s.commandInfo(c)
			} else {
				s.r.nullArray()
			}
		}
	default:
		s.r.err("ERR unknown subcommand '" + sanitize(clip(args[1], 128)) + "'. Try COMMAND HELP.")
	}
	return 0
}

// commandInfo is the first six fields of Redis's COMMAND reply: name,
// arity, flags, first key, last key, step.
func (s *Session) commandInfo(c *command) {
	s.r.array(6)
	s.r.bulkString(c.name)
	s.r.int(int64(c.arity))
	s.r.array(0)
	first, last := int64(0), int64(0)
	switch c.name {
	case "get", "set", "getdel", "append", "strlen", "incr", "decr", "incrby", "decrby", "type",
		"expire", "pexpire", "persist", "ttl", "pttl":
		first, last = 1, 1
	case "del", "unlink", "exists", "mget", "mset":
		first, last = 1, -1
	}
	s.r.int(first)
	s.r.int(last)
	s.r.int(b2i(first != 0) + b2i(c.name == "mset"))
}

func cmdInfo(s *Session, args [][]byte) kv.Ticket {
	in := s.st.Info()
	aof := 0
	if in.Policy != "" {
		aof = 1
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Server\r\nredis_version:%s\r\nredis_mode:standalone\r\nwirebench:1\r\n", Version)
	fmt.Fprintf(&b, "\r\n# Clients\r\nconnected_clients:%d\r\nmaxclients:%d\r\n", s.srv.conns.Load(), s.srv.maxConns())
	fmt.Fprintf(&b, "\r\n# Persistence\r\naof_enabled:%d\r\naof_rewrite_in_progress:%d\r\naof_current_size:%d\r\naof_fsync_policy:%s\r\naof_fsyncs:%d\r\naof_write_batches:%d\r\naof_records:%d\r\naof_rewrites:%d\r\n",
		aof, b2i(in.RewriteInProgress), in.AOFSize, in.Policy, in.Fsyncs, in.Batches, in.Records, in.Rewrites)
	// This session's commands since its last batch count too (INFO
	// itself does not yet: Redis counts a command after it ran).
	fmt.Fprintf(&b, "\r\n# Stats\r\ntotal_commands_processed:%d\r\nkeyspace_hits:%d\r\nkeyspace_misses:%d\r\nexpired_keys:%d\r\nwrites:%d\r\nrefused_writes:%d\r\n",
		s.srv.commands.Load()+s.cmds, in.Hits, in.Misses, in.Expired, in.Writes, in.Refused)
	fmt.Fprintf(&b, "\r\n%s", s.replInfo())
	fmt.Fprintf(&b, "\r\n# Keyspace\r\n")
	if in.Keys > 0 {
		fmt.Fprintf(&b, "db0:keys=%d,expires=0,avg_ttl=0\r\n", in.Keys)
	}
	s.r.verbatim(infoSections(b.String(), args[1:]))
	return 0
}

// infoSections keeps the sections named in args (all, default and
// everything keep all), as INFO [section ...].
func infoSections(all string, args [][]byte) string {
	if len(args) == 0 {
		return all
	}
	want := map[string]bool{}
	for _, a := range args {
		n := strings.ToLower(string(a))
		if n == "all" || n == "default" || n == "everything" {
			return all
		}
		want[n] = true
	}
	var out []string
	for _, sec := range strings.Split(all, "\r\n\r\n") {
		name, _, _ := strings.Cut(strings.TrimPrefix(sec, "# "), "\r\n")
		if want[strings.ToLower(name)] {
			out = append(out, strings.TrimSuffix(sec, "\r\n"))
		}
	}
	if len(out) == 0 {
		return ""
	}
	return strings.Join(out, "\r\n\r\n") + "\r\n"
}

// match is Redis's glob (stringmatchlen): * ? [abc] [^a-z] and \ escapes.
func match(p, s []byte) bool {
	var skip bool
	return matchImpl(p, s, &skip)
}

// matchImpl: skipLonger is Redis's fix for exponential backtracking: once
// the pattern after a '*' failed against every suffix, shorter suffixes
// at an outer '*' cannot match either.
func matchImpl(p, s []byte, skipLonger *bool) bool {
	for len(p) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 1 && p[1] == '*' {
				p = p[1:]
			}
			if len(p) == 1 {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if matchImpl(p[1:], s[i:], skipLonger) {
					return true
				}
				if *skipLonger {
					return false
				}
			}
			*skipLonger = true
			return false
		case '?':
			if len(s) == 0 {
				return false
			}
			s = s[1:]
		case '[':
			if len(s) == 0 {
				return false
			}
			p = p[1:]
			not := len(p) > 0 && p[0] == '^'
			if not {
				p = p[1:]
			}
			hit := false
			for len(p) > 0 && p[0] != ']' {
				switch {
				case p[0] == '\\' && len(p) >= 2:
					p = p[1:]
					hit = hit || p[0] == s[0]
				case len(p) >= 3 && p[1] == '-':
					lo, hi := p[0], p[2]
					if lo > hi {
						lo, hi = hi, lo
					}
					hit = hit || (s[0] >= lo && s[0] <= hi)
					p = p[2:]
				default:
					hit = hit || p[0] == s[0]
				}
				p = p[1:]
			}
			if len(p) == 0 { // unterminated: Redis treats the end as ']'
				if hit == not {
					return false
				}
				s = s[1:]
				continue
			}
			if hit == not {
				return false
			}
			s = s[1:]
		case '\\':
			if len(p) >= 2 {
				p = p[1:]
			}
			fallthrough
		default:
			if len(s) == 0 || p[0] != s[0] {
				return false
			}
			s = s[1:]
		}
		p = p[1:]
	}
	return len(s) == 0
}
