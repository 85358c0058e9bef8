package scenario

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/clientio"
	"github.com/wirebench/wirebench/load/resp"
	"github.com/wirebench/wirebench/measure"
)

// respConn is the lean pipelining RESP2 client: one connection owned by
// one VU; a batch of commands is written in one write, then their replies
// are read in order from a reused buffer (redis-benchmark's -P). Bytes are
// counted on the socket.
//
// Not safe for concurrent use.
type respConn struct {
	addr    string
	dialer  *net.Dialer
	wire    *measure.Bytes
	timeout time.Duration

	conn     net.Conn
	got      clientio.CountReader // counts reply bytes, to tell "closed before" from "closed during"
	br       *bufio.Reader
	stopWake func() bool
	deadline time.Time
	reply    resp.Reply
	buf      []byte
}

func newRESPConn(addr string, wire *measure.Bytes, timeout time.Duration) *respConn {
	return &respConn{addr: addr, dialer: &net.Dialer{Timeout: timeout}, wire: wire, timeout: timeout}
}

// send writes a batch of commands, dialling first if needed.
func (c *respConn) send(ctx context.Context, cmds []byte) error {
	if c.conn == nil {
		if err := c.connect(ctx); err != nil {
			return err
		}
	}
	if c.timeout > 0 {
		// As h1.Conn: re-arm the deadline only when less than 90% is left.
		if now := time.Now(); c.deadline.Sub(now) < c.timeout*9/10 {
			c.deadline = now.Add(c.timeout)
			c.conn.SetDeadline(c.deadline)
		}
	}
	if err := ctx.Err(); err != nil { // after SetDeadline: see h1.Conn.connect
		c.close()
		return err
	}
	if _, err := c.conn.Write(cmds); err != nil {
		c.close()
		return err
	}
	return nil
}

// read reads the next reply; it is valid until the next call. An error
// closes the connection: the replies still due are lost with it.
func (c *respConn) read() (*resp.Reply, error) {
	buffered, got := c.br.Buffered() > 0, c.got.Got
	var err error
	c.buf, err = resp.Parse(c.br, &c.reply, c.buf)
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			// Bytes of this reply had arrived (left in the buffer by the
			// previous read, or read by this one): it was cut in the middle.
			if buffered || c.got.Got > got {
				err = clientio.ErrClosedDuring
			} else {
				err = clientio.ErrClosedBefore
			}
		}
		c.close()
		return nil, err
	}
	return &c.reply, nil
}

func (c *respConn) connect(ctx context.Context) error {
	conn, err := c.dialer.DialContext(ctx, "tcp", c.addr)
	if err != nil {
		return err
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true) // the Go default, stated: a batch goes out at once
	}
	c.conn = measure.CountConn(conn, c.wire)
	c.deadline = time.Time{}
	c.got = clientio.CountReader{R: c.conn}
	if c.br == nil {
		c.br = bufio.NewReaderSize(&c.got, 32<<10)
	} else {
		c.br.Reset(&c.got)
	}
	// When ctx ends, a read blocked on a stalled server returns at once.
	c.stopWake = context.AfterFunc(ctx, func() { conn.SetDeadline(clientio.Wake) })
	return nil
}

func (c *respConn) close() {
	if c.conn == nil {
		return
	}
	c.stopWake()
	c.conn.Close()
	c.conn = nil
}

// respVU is a KV VU over RESP: one batch of Pipeline commands per
// exchange (one command when the runner asks for one at a time).
type respVU struct {
	kvVU
	c    *respConn
	cmds []byte
	num  []byte
	due  []kvDraw // what each command of the batch was, to check its reply
	one  [1]load.Outcome
}

var (
	respSet     = []byte("SET")
	respGet     = []byte("GET")
	respDel     = []byte("DEL")
	respPExpire = []byte("PEXPIRE")
	respPX      = []byte("PX")
)

// Do implements VU: one command, one reply.
func (v *respVU) Do(ctx context.Context, o *load.Outcome) {
	v.one[0] = *o
	v.DoBatch(ctx, v.one[:])
	*o = v.one[0]
}

// Depth implements load.BatchVU.
func (v *respVU) Depth() int { return v.s.o.Pipeline }

// DoBatch implements load.BatchVU: len(outs) commands written at once, then
// their replies read and checked in order.
func (v *respVU) DoBatch(ctx context.Context, outs []load.Outcome) {
	v.cmds, v.due = v.cmds[:0], v.due[:0]
	for i := range outs {
		d := v.next()
		v.cmds = v.appendCommand(v.cmds, d, &outs[i])
		outs[i].Op = d.out
		v.due = append(v.due, d)
	}
	if err := v.c.send(ctx, v.cmds); err != nil {
		failAll(outs, clientio.FailReason(err))
		return
	}
	for i := range outs {
		r, err := v.c.read()
		if err != nil {
			failAll(outs[i:], clientio.FailReason(err))
			return
		}
		v.check(r, v.due[i], &outs[i])
	}
}

// appendCommand appends d's command: SET key value [PX ms], GET key,
// DEL key or PEXPIRE key ms.
func (v *respVU) appendCommand(b []byte, d kvDraw, o *load.Outcome) []byte {
	v.key = v.appendKey(v.key[:0], d)
	switch d.op {
	case kvOpSet:
		v.val = appendKVValue(v.val[:0], d.key, v.s.valueSize(d.key))
		o.BodyOut = len(v.val)
		if d.ttl > 0 {
			v.num = strconv.AppendInt(v.num[:0], d.ttl, 10)
			return resp.AppendCommand(b, respSet, v.key, v.val, respPX, v.num)
		}
		return resp.AppendCommand(b, respSet, v.key, v.val)
	case kvOpDel:
		return resp.AppendCommand(b, respDel, v.key)
	case kvOpExpire:
		v.num = strconv.AppendInt(v.num[:0], d.ttl, 10)
		return resp.AppendCommand(b, respPExpire, v.key, v.num)
	}
	return resp.AppendCommand(b, respGet, v.key)
}

// check judges one reply: SET wants +OK, GET the key's own value (or
// nothing, counted as a miss, where the load can make keys absent), DEL
// and PEXPIRE an integer. Status is 200 for a reply of the expected kind,
// 500 for an error reply (-ERR ...), so results count RESP replies like
// HTTP statuses.
func (v *respVU) check(r *resp.Reply, d kvDraw, o *load.Outcome) {
	if r.Kind == '-' {
		o.Status = 500
		o.Fail = respErrorReason(r.Bulk)
		return
	}
	o.Status = 200
	switch d.op {
	case kvOpSet:
		if r.Kind != '+' || string(r.Bulk) != "OK" {
			o.Fail = fmt.Sprintf("check: SET reply %q, want +OK", r.Kind)
		}
		return
	case kvOpDel, kvOpExpire:
		if r.Kind != ':' || r.Int < 0 || r.Int > 1 {
			o.Fail = fmt.Sprintf("check: %s reply %q, want :0 or :1", kvOpNames[d.op], r.Kind)
		}
		return
	}
	switch {
	case r.Kind == '$' && r.Nil:
		v.counts.gets++
		v.counts.misses++
		if !d.miss && !v.s.missOK {
			o.Fail = kvMissingFail
		}
		return
	case r.Kind != '$':
		o.Fail = fmt.Sprintf("check: GET reply %q, want a bulk string", r.Kind)
		return
	}
	v.counts.gets++
	v.counts.hits++
	o.BodyIn = len(r.Bulk)
	v.val = appendKVValue(v.val[:0], d.key, v.s.valueSize(d.key))
	if d.miss || !bytes.Equal(r.Bulk, v.val) {
		o.Fail = kvCheckFail
	}
}

// respErrorReason keeps an error reply's first word (its class: ERR,
// WRONGTYPE, OOM, MISCONF, ...), so failures stay low-cardinality.
func respErrorReason(msg []byte) string {
	if i := bytes.IndexByte(msg, ' '); i > 0 {
		msg = msg[:i]
	}
	if len(msg) > 32 {
		msg = msg[:32]
	}
	return "error reply " + string(msg)
}

// Close implements VU.
func (v *respVU) Close() error {
	v.c.close()
	return nil
}

// failAll marks every outcome failed with reason.
func failAll(outs []load.Outcome, reason string) {
	for i := range outs {
		outs[i].Fail = reason
	}
}
