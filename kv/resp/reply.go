package resp

import "strconv"

// reply appends RESP replies to a buffer in the connection's protocol
// version: RESP2 by default, RESP3 after HELLO 3 (nulls, maps, verbatim
// strings differ).
type reply struct {
	b     []byte
	resp3 bool
}

func (r *reply) simple(s string) { r.b = append(append(append(r.b, '+'), s...), '\r', '\n') }
func (r *reply) ok()             { r.b = append(r.b, "+OK\r\n"...) }
func (r *reply) err(s string)    { r.b = append(append(append(r.b, '-'), s...), '\r', '\n') }

func (r *reply) int(n int64) {
	r.b = append(r.b, ':')
	r.b = strconv.AppendInt(r.b, n, 10)
	r.b = append(r.b, '\r', '\n')
}

func (r *reply) bulk(v []byte) {
	r.b = append(r.b, '$')
	r.b = strconv.AppendInt(r.b, int64(len(v)), 10)
	r.b = append(r.b, '\r', '\n')
	r.b = append(r.b, v...)
	r.b = append(r.b, '\r', '\n')
}

func (r *reply) bulkString(v string) {
	r.b = append(r.b, '$')
	r.b = strconv.AppendInt(r.b, int64(len(v)), 10)
	r.b = append(r.b, '\r', '\n')
	r.b = append(r.b, v...)
	r.b = append(r.b, '\r', '\n')
}

// null is a missing value: $-1 in RESP2, _ in RESP3.
func (r *reply) null() {
	if r.resp3 {
		r.b = append(r.b, "_\r\n"...)
		return
	}
	r.b = append(r.b, "$-1\r\n"...)
}

// nullArray is a missing aggregate: *-1 in RESP2, _ in RESP3.
func (r *reply) nullArray() {
	if r.resp3 {
		r.b = append(r.b, "_\r\n"...)
		return
	}
	r.b = append(r.b, "*-1\r\n"...)
}

func (r *reply) array(n int) { r.head('*', n) }

// mapHead starts n key-value pairs: a map in RESP3, a flat array of 2n in
// RESP2.
func (r *reply) mapHead(n int) {
	if r.resp3 {
		r.head('%', n)
		return
	}
	r.head('*', 2*n)
}

// verbatim is a text blob: RESP3's verbatim string, else a bulk string.
func (r *reply) verbatim(s string) {
	if !r.resp3 {
		r.bulkString(s)
		return
	}
	r.b = append(r.b, '=')
	r.b = strconv.AppendInt(r.b, int64(len(s)+4), 10)
	r.b = append(r.b, "\r\ntxt:"...)
	r.b = append(r.b, s...)
	r.b = append(r.b, '\r', '\n')
}

func (r *reply) head(c byte, n int) {
	r.b = append(r.b, c)
	r.b = strconv.AppendInt(r.b, int64(n), 10)
	r.b = append(r.b, '\r', '\n')
}
