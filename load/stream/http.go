package stream

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"time"

	"github.com/coder/websocket"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/codec"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/clientio"
	"github.com/wirebench/wirebench/load/wire"
)

// The REST kinds: each VU has its own HTTP/1.1 connection (kept alive),
// counted by layer; lists are decoded whole (rest-list) or record by
// record (ndjson, sse) with the fast JSON library, as the other REST
// clients decode.

// maxStreamLine bounds one NDJSON record or SSE line the client reads.
const maxStreamLine = 1 << 20

var fastJSON = codec.MustLookup("json-fast").Codec

func (v *streamVU) httpClient(stack wire.Stack) *http.Client {
	if c, ok := v.conn.(*http.Client); ok {
		return c
	}
	if v.s.h3 != nil { // h3.go
		c := v.s.h3.Client(v.id)
		v.conn = c
		return c
	}
	d := &net.Dialer{Timeout: v.s.o.Timeout}
	tr := &http.Transport{DialContext: wire.Dialer(d.DialContext, stack, &v.s.layers, v.wire),
		MaxIdleConnsPerHost: 1, DisableCompression: true}
	v.closer = tr.CloseIdleConnections
	c := &http.Client{Transport: tr}
	v.conn = c
	return c
}

// httpDo runs one list exchange: GET /users as JSON, NDJSON or SSE.
func (v *streamVU) httpDo(ctx context.Context, o *load.Outcome, t0 time.Time) (items int, first, last time.Duration, ok bool) {
	path, accept, stack := "/users", codec.MediaJSON, wire.StackH1
	switch v.s.o.Kind {
	case NDJSON:
		accept, stack = "application/x-ndjson", wire.StackH1NDJSON
	case SSE:
		path, accept, stack = "/users/events", "text/event-stream", wire.StackH1SSE
	}
	c := v.httpClient(stack)
	var gotFirst time.Duration
	trace := &httptrace.ClientTrace{GotFirstResponseByte: func() { gotFirst = time.Since(t0) }}
	scheme := "http://"
	if v.s.h3 != nil {
		scheme = "https://"
	}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), "GET", scheme+v.s.host+path, nil)
	if err != nil {
		o.Fail = "request: " + err.Error()
		return 0, 0, 0, false
	}
	req.Header.Set("Accept", accept)
	resp, err := c.Do(req)
	if err != nil {
		o.Fail = clientio.FailReason(err)
		return 0, 0, 0, false
	}
	if v.s.h3 != nil { // the body's message and envelope bytes, as read (h3.go)
		resp.Body = bodyFeed{resp.Body, v.s.layers.Body(stack)}
	}
	defer resp.Body.Close()
	o.Status = resp.StatusCode
	if resp.StatusCode != 200 {
		o.Fail = fmt.Sprintf("status %d", resp.StatusCode)
		return 0, 0, 0, false
	}
	if v.s.o.Kind == RESTList {
		var buf bytes.Buffer
		if _, err := buf.ReadFrom(http.MaxBytesReader(nil, resp.Body, clientio.MaxBody)); err != nil {
			o.Fail = clientio.FailReason(err)
			return 0, 0, 0, false
		}
		var ul api.UserList
		if err := fastJSON.Unmarshal(buf.Bytes(), &ul); err != nil {
			o.Fail = "decode: " + err.Error()
			return 0, 0, 0, false
		}
		o.BodyIn = buf.Len()
		for i := 1; i < len(ul.Users); i++ {
			if ul.Users[i].ID <= ul.Users[i-1].ID {
				o.Fail = "check: users out of order"
				return 0, 0, 0, false
			}
		}
		// one item, the whole list: its first (and last) byte came with
		// the response's first byte and its end
		d := time.Since(t0)
		return len(ul.Users), gotFirst, d, v.checkCount(o, len(ul.Users))
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 4096), maxStreamLine)
	var prev time.Duration
	var lastID int64
	ended := v.s.o.Kind == NDJSON // NDJSON ends with the body; SSE with an "end" event
	event := ""
	for sc.Scan() {
		line := sc.Bytes()
		o.BodyIn += len(line) + 1
		data := line
		if v.s.o.Kind == SSE {
			k, val, _ := bytes.Cut(line, []byte(":"))
			val = bytes.TrimPrefix(val, []byte(" "))
			switch string(k) {
			case "event":
				event = string(val)
				continue
			case "data":
				data = val
			default:
				continue // id, comments, the blank line ending an event
			}
			if event == "end" { // the body ends right after (read to its end: BodyIn is the whole body)
				ended = true
				continue
			}
			if ended {
				o.Fail = "check: data after the end event"
				return items, first, 0, false
			}
		}
		var u api.User
		if err := fastJSON.Unmarshal(data, &u); err != nil {
			o.Fail = "decode: " + err.Error()
			return items, first, 0, false
		}
		now := time.Since(t0)
		if items == 0 {
			first = now
		} else {
			v.gap(prev, now)
		}
		prev = now
		if u.ID <= lastID || u.Email == "" {
			o.Fail = "check: users out of order or empty"
			return items, first, 0, false
		}
		lastID = u.ID
		items++
	}
	if err := sc.Err(); err != nil {
		o.Fail = clientio.FailReason(err)
		return items, first, 0, false
	}
	if !ended {
		o.Fail = "check: stream ended without its end event"
		return items, first, 0, false
	}
	return items, first, time.Since(t0), v.checkCount(o, items)
}

// wsDo runs one WebSocket exchange on the VU's WebSocket (opened once,
// kept): Messages JSON echo requests, each answered before the next.
func (v *streamVU) wsDo(ctx context.Context, o *load.Outcome, t0 time.Time) (items int, first, last time.Duration, ok bool) {
	c, _ := v.conn.(*websocket.Conn)
	if c == nil {
		d := &net.Dialer{Timeout: v.s.o.Timeout}
		hc := &http.Client{Transport: &http.Transport{DialContext: wire.Dialer(d.DialContext, wire.StackWS, &v.s.layers, v.wire)}}
		var err error
		c, _, err = websocket.Dial(ctx, "ws://"+v.s.host+"/ws/echo", &websocket.DialOptions{HTTPClient: hc})
		if err != nil {
			o.Fail = "websocket dial: " + clientio.FailReason(err)
			return 0, 0, 0, false
		}
		c.SetReadLimit(maxStreamLine)
		v.conn = c
		v.closer = func() { c.Close(websocket.StatusNormalClosure, "") }
	}
	fail := func(what string, err error) (int, time.Duration, time.Duration, bool) {
		o.Fail = what + ": " + clientio.FailReason(err)
		c.CloseNow()
		v.conn = nil // the next exchange dials again
		return 0, 0, 0, false
	}
	for i := range v.s.o.Messages {
		req := api.EchoRequest{FirstMessage: "message ", SecondMessage: fmt.Sprint(i)}
		b, err := fastJSON.Marshal(&req)
		if err != nil {
			return fail("encode", err)
		}
		sent := time.Now()
		if err := c.Write(ctx, websocket.MessageText, b); err != nil {
			return fail("websocket write", err)
		}
		_, msg, err := c.Read(ctx)
		if err != nil {
			return fail("websocket read", err)
		}
		v.perMessage(time.Since(sent))
		if i == 0 {
			first = time.Since(t0)
		}
		o.BodyOut += len(b)
		o.BodyIn += len(msg)
		var r api.EchoResponse
		if err := fastJSON.Unmarshal(msg, &r); err != nil || r.Message != req.FirstMessage+req.SecondMessage {
			o.Fail = "check: wrong echo"
			return 0, 0, 0, false
		}
	}
	o.Status = 101
	return v.s.o.Messages, first, time.Since(t0), true
}
