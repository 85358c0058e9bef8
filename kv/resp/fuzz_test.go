package resp

import (
	"bufio"
	"bytes"
	"testing"

	"github.com/wirebench/wirebench/kv"
)

// FuzzExec drives the command layer with arbitrary argument vectors (NUL
// separates arguments, newline separates commands) against a memory
// store: no panic, and every reply is one well-formed RESP value.
func FuzzExec(f *testing.F) {
	for _, cmds := range script {
		f.Add([]byte(string(bytes.Join(toBytes(cmds), []byte{0}))))
	}
	f.Add([]byte("SET\x00k\x00v\x00EX\x0010\nGET\x00k\nHELLO\x003\nMGET\x00k\x00x\nKEYS\x00*[a-\\\nSCAN\x000\x00MATCH\x00k*\x00COUNT\x001000"))
	f.Add([]byte("INCRBY\x00n\x00-9223372036854775808\nDECRBY\x00n\x009223372036854775807\nAPPEND\x00n\x00x\nEXPIRE\x00n\x00-9223372036854775808"))
	st, err := kv.Open(kv.Options{})
	if err != nil {
		f.Fatal(err)
	}
	defer st.Close()
	srv := &Server{st: st}
	f.Fuzz(func(t *testing.T, data []byte) {
		sess := srv.newSession()
		for _, line := range bytes.Split(data, []byte{'\n'}) {
			args := bytes.Split(line, []byte{0})
			before := len(sess.r.b)
			sess.Exec(args)
			sess.finish()
			out := sess.r.b[before:]
			if len(out) == 0 && len(args) > 0 {
				t.Fatalf("no reply to %q", args)
			}
			c := &client{br: bufio.NewReader(bytes.NewReader(out))}
			if _, err := c.read(); err != nil {
				t.Fatalf("reply to %q is not RESP: %v: %q", args, err, out)
			}
			if rest, _ := c.br.Peek(1); len(rest) != 0 {
				t.Fatalf("reply to %q has trailing bytes: %q", args, out)
			}
		}
		st.FlushAll()
	})
}

func toBytes(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

// FuzzReqReader: the request parser never panics, never reads past what
// it was given, and parses what encodeCmd produced back to the same args.
func FuzzReqReader(f *testing.F) {
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$1\r\na\r\n"))
	f.Add([]byte("PING\r\nSET a \"b c\\x41\" 'd\\'e'\r\n"))
	f.Add([]byte("*-1\r\n*0\r\n*1\r\n$-1\r\n"))
	f.Add([]byte("*1\r\n$99999999999\r\n"))
	f.Add([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nva"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rd := reqReader{buf: append([]byte(nil), data...), w: len(data)}
		for range 1000 {
			args, err := rd.next()
			if err != nil || args == nil {
				break
			}
			if rd.r > rd.w {
				t.Fatalf("read past the buffer: r=%d w=%d", rd.r, rd.w)
			}
			// Round trip: what a client encodes from these args parses back.
			var strs []string
			for _, a := range args {
				strs = append(strs, string(a))
			}
			if len(strs) == 0 {
				continue
			}
			enc := encodeCmd(strs...)
			rd2 := reqReader{buf: enc, w: len(enc)}
			back, err := rd2.next()
			if err != nil || len(back) != len(args) {
				t.Fatalf("round trip of %q: %q, %v", strs, back, err)
			}
			for i := range back {
				if !bytes.Equal(back[i], args[i]) {
					t.Fatalf("round trip arg %d: %q != %q", i, back[i], args[i])
				}
			}
		}
	})
}
