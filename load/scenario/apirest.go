package scenario

import (
	"bytes"
	"context"
	"net/http"
	"strconv"

	"github.com/klauspost/compress/gzip"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/codec"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/clientio"
	"github.com/wirebench/wirebench/load/h1"
	"github.com/wirebench/wirebench/load/traceparent"
)

// restClient speaks the REST API in one format over lean HTTP/1.1 (h1)
// or h2c (h2, net/http's HTTP/2 client).
type restClient struct {
	base   string // http://host:port, for h2c
	host   string
	header []string // Content-Type and Accept, the format's canonical media type
	codec  codec.Codec
	h1     *h1.Conn
	h2     *http.Client
	req    []byte // reused request buffer (h1)
	path   []byte
	buf    []byte // reused response buffer (h2)
	// gzip is set when the scenario asks for compressed responses: it
	// decodes them into plain, so checks see the real body.
	gzip  *gzip.Reader
	plain []byte
	// tp, with Options.Traceparent, makes each request's trace ID; the
	// last header line is then the traceparent, rewritten per request.
	tp    *traceparent.Gen
	tpBuf []byte
}

func (c *restClient) close() {
	if c.h1 != nil {
		c.h1.Close()
	}
}

// do performs one exchange and decodes the body into out (if non-nil)
// when the status is want.
func (c *restClient) do(ctx context.Context, method string, path []byte, body []byte, want int, out any, o *load.Outcome) bool {
	o.BodyOut += len(body)
	if c.tp != nil {
		id, span := c.tp.Next()
		c.tpBuf = traceparent.Append(append(c.tpBuf[:0], traceparent.Header+": "...), id, span)
		c.header[len(c.header)-1] = string(c.tpBuf)
		o.Trace = id
	}
	var status int
	var respBody []byte
	var coded bool // the body has a content coding
	if c.h1 != nil {
		c.req = h1.AppendRequest(c.req[:0], method, string(path), c.host, c.header, body, c.h1.KeepAlive)
		resp, err := c.h1.RoundTrip(ctx, c.req, false, false)
		if err != nil {
			o.Fail = clientio.FailReason(err)
			return false
		}
		defer c.h1.Release() // decoded below: the body is not kept past this call
		status, respBody, coded = resp.Status, resp.Body, len(resp.ContentEncoding) > 0
	} else {
		var err error
		var rd []byte
		if body != nil {
			rd = body
		}
		var ce string
		status, respBody, err = h1.StdDo(ctx, c.h2, method, c.base+string(path), c.header, rd, &c.buf, &ce, nil)
		if err != nil {
			o.Fail = clientio.FailReason(err)
			return false
		}
		coded = ce != ""
	}
	o.Status = status
	o.BodyIn += len(respBody) // as transferred: compressed when coded
	if coded {
		var ok bool
		if respBody, ok = c.decompress(respBody); !ok {
			o.Fail = "decompress body"
			return false
		}
	}
	if status != want {
		o.Fail = "status " + strconv.Itoa(status)
		return false
	}
	if out != nil {
		if err := unmarshal(c.codec, respBody, out); err != nil {
			o.Fail = "decode " + c.codec.Name() + " body"
			return false
		}
	}
	return true
}

// decompress undoes gzip content coding into a reused buffer. A coded
// body when none was asked for is a failure too: the server must not
// compress unasked.
func (c *restClient) decompress(b []byte) ([]byte, bool) {
	if c.gzip == nil {
		return nil, false
	}
	if err := c.gzip.Reset(bytes.NewReader(b)); err != nil {
		return nil, false
	}
	// A gzip bomb is refused at maxBody decoded bytes, as a raw body is.
	var err error
	if c.plain, err = h1.ReadLimited(c.plain, c.gzip, clientio.MaxBody); err != nil {
		return nil, false
	}
	return c.plain, true
}

func (c *restClient) userPath(id int64) []byte {
	c.path = strconv.AppendInt(append(c.path[:0], "/users/"...), id, 10)
	return c.path
}

func (c *restClient) listUsers(ctx context.Context, out *api.UserList, o *load.Outcome) bool {
	return c.do(ctx, "GET", []byte("/users"), nil, http.StatusOK, out, o)
}

func (c *restClient) countUsers(ctx context.Context, o *load.Outcome) (int, bool) {
	var n userCount
	ok := c.do(ctx, "GET", []byte("/users"), nil, http.StatusOK, &n, o)
	return n.n, ok
}

func (c *restClient) createUser(ctx context.Context, in *encoded[api.User], out *api.User, o *load.Outcome) bool {
	return c.do(ctx, "POST", []byte("/users"), in.body, http.StatusCreated, out, o)
}

func (c *restClient) getUser(ctx context.Context, id int64, out *api.User, o *load.Outcome) bool {
	return c.do(ctx, "GET", c.userPath(id), nil, http.StatusOK, out, o)
}

func (c *restClient) updateUser(ctx context.Context, id int64, in *encoded[api.User], out *api.User, o *load.Outcome) bool {
	return c.do(ctx, "PUT", c.userPath(id), in.body, http.StatusOK, out, o)
}

func (c *restClient) deleteUser(ctx context.Context, id int64, o *load.Outcome) bool {
	return c.do(ctx, "DELETE", c.userPath(id), nil, http.StatusNoContent, nil, o)
}

func (c *restClient) echo(ctx context.Context, in *encoded[api.EchoRequest], out *api.EchoResponse, o *load.Outcome) bool {
	return c.do(ctx, "POST", []byte("/echo"), in.body, http.StatusOK, out, o)
}
