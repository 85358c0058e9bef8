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
// 204, GET /kv/{key} 200 with the value (404 when absent). http-raw sends
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

// Do implements VU: one PUT or GET.
func (v *kvHTTPVU) Do(ctx context.Context, o *load.Outcome) {
	op, k := v.next()
	o.Op = v.outcomeOp(op)
	if op == kvOpSet {
		v.put(ctx, k, o)
		return
	}
	v.getKey(ctx, k, o)
}

// setBody is key k's PUT body: the value, or its JSON object.
func (v *kvHTTPVU) setBody(k int) []byte {
	if !v.json {
		v.body = appendKVValue(v.body[:0], k, v.s.o.ValueSize)
		return v.body
	}
	// The value is digits and dots: a JSON string needs no escaping.
	v.body = append(v.body[:0], `{"value":"`...)
	v.body = appendKVValue(v.body, k, v.s.o.ValueSize)
	v.body = append(v.body, `","ttl_ms":0}`...)
	return v.body
}

func (v *kvHTTPVU) put(ctx context.Context, k int, o *load.Outcome) {
	body := v.setBody(k)
	o.BodyOut = len(body)
	v.path = kvURLPath(v.path[:0], k)
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

func (v *kvHTTPVU) getKey(ctx context.Context, k int, o *load.Outcome) {
	v.path = kvURLPath(v.path[:0], k)
	v.req = h1.AppendRequest(v.req[:0], "GET", string(v.path), v.host, v.getHdr, nil, true)
	resp, err := v.c.RoundTrip(ctx, v.req, false, false)
	if err != nil {
		o.Fail = clientio.FailReason(err)
		return
	}
	o.Status, o.BodyIn = resp.Status, len(resp.Body)
	if resp.Status == 404 {
		o.Fail = kvMissingFail
		return
	}
	if resp.Status != 200 {
		o.Fail = "status " + strconv.Itoa(resp.Status)
		return
	}
	v.val = appendKVValue(v.val[:0], k, v.s.o.ValueSize)
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
	v.key = appendKVKey(v.key[:0], k)
	if v.dec.Value != string(v.val) || v.dec.Key != string(v.key) {
		o.Fail = kvCheckFail
	}
}

// Close implements VU.
func (v *kvHTTPVU) Close() error {
	v.c.Close()
	return nil
}
