package scenario

import (
	"context"
	"strconv"

	"github.com/wirebench/wirebench/codec"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/clientio"
	"github.com/wirebench/wirebench/load/h1"
)

// The KV scenarios over HTTP, per the KV contract: PUT /kv/{key} answers
// 204, GET /kv/{key} 200 with the value (404 when absent), DELETE and
// PATCH ?ttl_ms= (EXPIRE) 204 (404 when absent). http-raw sends
// and asks for application/octet-stream (the body is the value);
// http-json sends {"value": ..., "ttl_ms": 0} and decodes
// {"key", "value", "ttl_ms"}.

// kvHTTPVU is a KV VU over the lean HTTP/1.1 client.
type kvHTTPVU struct {
	kvVU
	c      *h1.Conn
	json   bool
	host   string
	setHdr []string
	getHdr []string
	req    []byte
	path   []byte
	body   []byte
	dec    kvJSONItem
	codec  codec.Codec
}

// kvJSONItem is GET /kv/{key}'s JSON reply.
type kvJSONItem struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	TTLMs int64  `json:"ttl_ms"`
}

func newHTTPKVVU(v kvVU, c *h1.Conn, json bool) *kvHTTPVU {
	h := &kvHTTPVU{kvVU: v, c: c, json: json, host: c.Addr}
	mt := "application/octet-stream"
	if json {
		mt = codec.MediaJSON
		// The client decodes with the fast library: it measures the
		// server, so its own decoder must be the cheapest available.
		h.codec = codec.MustLookup("json-fast").Codec
	}
	h.setHdr = []string{"Content-Type: " + mt}
	h.getHdr = []string{"Accept: " + mt}
	return h
}

// Do implements VU: one PUT, GET, DELETE or PATCH (EXPIRE).
func (v *kvHTTPVU) Do(ctx context.Context, o *load.Outcome) {
	d := v.next()
	o.Op = d.out
	switch d.op {
	case kvOpSet:
		v.put(ctx, d, o)
	case kvOpDel:
		v.keyOp(ctx, d, o, "DELETE")
	case kvOpExpire:
		v.keyOp(ctx, d, o, "PATCH")
	default:
		v.getKey(ctx, d, o)
	}
}

// setBody is key k's PUT body: the value, or its JSON object.
func (v *kvHTTPVU) setBody(d kvDraw) []byte {
	size := v.s.valueSize(d.key)
	if !v.json {
		v.body = appendKVValue(v.body[:0], d.key, size)
		return v.body
	}
	// The value is digits and dots: a JSON string needs no escaping.
	v.body = append(v.body[:0], `{"value":"`...)
	v.body = appendKVValue(v.body, d.key, size)
	v.body = append(v.body, `","ttl_ms":`...)
	v.body = strconv.AppendInt(v.body, d.ttl, 10)
	v.body = append(v.body, '}')
	return v.body
}

func (v *kvHTTPVU) put(ctx context.Context, d kvDraw, o *load.Outcome) {
	body := v.setBody(d)
	o.BodyOut = len(body)
	v.path = kvURLPath(v.path[:0], &v.kvVU, d)
	if d.ttl > 0 && !v.json {
		v.path = strconv.AppendInt(append(v.path, "?ttl_ms="...), d.ttl, 10)
	}
	v.req = h1.AppendRequest(v.req[:0], "PUT", string(v.path), v.host, v.setHdr, body, true)
	resp, err := v.c.RoundTrip(ctx, v.req, false, false)
	if err != nil {
		o.Fail = clientio.FailReason(err)
		return
	}
	o.Status, o.BodyIn = resp.Status, len(resp.Body)
	if resp.Status != 204 {
		o.Fail = "status " + strconv.Itoa(resp.Status)
	}
}

// keyOp sends DELETE /kv/{key}, or PATCH /kv/{key}?ttl_ms=N for EXPIRE:
// 204 when the key was there, 404 when not (absent keys are expected
// where the load deletes or expires them).
func (v *kvHTTPVU) keyOp(ctx context.Context, d kvDraw, o *load.Outcome, method string) {
	v.path = kvURLPath(v.path[:0], &v.kvVU, d)
	if method == "PATCH" {
		v.path = strconv.AppendInt(append(v.path, "?ttl_ms="...), d.ttl, 10)
	}
	v.req = h1.AppendRequest(v.req[:0], method, string(v.path), v.host, v.getHdr, nil, true)
	resp, err := v.c.RoundTrip(ctx, v.req, false, false)
	if err != nil {
		o.Fail = clientio.FailReason(err)
		return
	}
	o.Status, o.BodyIn = resp.Status, len(resp.Body)
	if resp.Status != 204 && resp.Status != 404 {
		o.Fail = "status " + strconv.Itoa(resp.Status)
	}
}

func (v *kvHTTPVU) getKey(ctx context.Context, d kvDraw, o *load.Outcome) {
	v.path = kvURLPath(v.path[:0], &v.kvVU, d)
	v.req = h1.AppendRequest(v.req[:0], "GET", string(v.path), v.host, v.getHdr, nil, true)
	resp, err := v.c.RoundTrip(ctx, v.req, false, false)
	if err != nil {
		o.Fail = clientio.FailReason(err)
		return
	}
	o.Status, o.BodyIn = resp.Status, len(resp.Body)
	if resp.Status == 404 {
		v.counts.gets++
		v.counts.misses++
		if !d.miss && !v.s.missOK {
			o.Fail = kvMissingFail
		}
		return
	}
	if resp.Status != 200 {
		o.Fail = "status " + strconv.Itoa(resp.Status)
		return
	}
	v.counts.gets++
	v.counts.hits++
	v.val = appendKVValue(v.val[:0], d.key, v.s.valueSize(d.key))
	if d.miss {
		o.Fail = kvCheckFail // a value for a key never written
		return
	}
	if !v.json {
		if string(resp.Body) != string(v.val) {
			o.Fail = kvCheckFail
		}
		return
	}
	v.dec = kvJSONItem{}
	if err := v.codec.Unmarshal(resp.Body, &v.dec); err != nil {
		o.Fail = "decode json body"
		return
	}
	v.key = appendKVKey(v.key[:0], d.key)
	if v.dec.Value != string(v.val) || v.dec.Key != string(v.key) {
		o.Fail = kvCheckFail
	}
}

// Close implements VU.
func (v *kvHTTPVU) Close() error {
	v.c.Close()
	return nil
}
