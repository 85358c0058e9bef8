package flow

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/codec"
)

// Formats are the wire formats Options.Format takes for the reference
// API (wirebench serve): a flow written in JSON runs in any of them.
var Formats = []string{"json", "toon", "cbor", "msgpack", "protobuf"}

// format runs a JSON flow against the reference API in another of its
// formats: each rendered JSON body is re-encoded as its route's API type,
// Content-Type and Accept name the format, and a response a capture or
// check reads is decoded as its route's type and seen as JSON. The
// routes are the reference API's (httpapi); other paths fail.
type format struct {
	json, to codec.Codec
	media    string
}

func newFormat(name string) (*format, error) {
	if !slices.Contains(Formats, name) {
		return nil, fmt.Errorf("%w: format %q: want one of %s (the reference API's)", ErrFlow, name, strings.Join(Formats, ", "))
	}
	e := codec.MustLookup(name)
	return &format{json: codec.MustLookup("json").Codec, to: e.Codec, media: e.MediaTypes[0]}, nil
}

// route is the reference API's type of a request's body and of its
// response's, for method and path (below the base URL, no query); nil
// when the route has none.
func route(method, path string) (in, out func() any) {
	user, users := func() any { return new(api.User) }, func() any { return new(api.UserList) }
	todo, todos := func() any { return new(api.Todo) }, func() any { return new(api.TodoList) }
	switch {
	case path == "/echo" && method == "POST":
		return func() any { return new(api.EchoRequest) }, func() any { return new(api.EchoResponse) }
	case path == "/users" && method == "POST":
		return user, user
	case path == "/users" && method == "GET":
		return nil, users
	case isItem(path, "/users/") && method == "PUT":
		return user, user
	case isItem(path, "/users/") && method == "GET":
		return nil, user
	case path == "/todos" && method == "POST":
		return todo, todo
	case path == "/todos" && method == "GET":
		return nil, todos
	case isItem(path, "/todos/") && method == "PUT":
		return todo, todo
	case isItem(path, "/todos/") && method == "GET":
		return nil, todo
	}
	return nil, nil
}

func isItem(path, prefix string) bool {
	id, ok := strings.CutPrefix(path, prefix)
	return ok && id != "" && !strings.Contains(id, "/")
}

// headers replaces Content-Type and Accept with the format's.
func (f *format) headers(hdr []string, body bool) []string {
	out := hdr[:0]
	for _, h := range hdr {
		k, _, _ := strings.Cut(h, ":")
		if k = strings.TrimSpace(k); !strings.EqualFold(k, "content-type") && !strings.EqualFold(k, "accept") {
			out = append(out, h)
		}
	}
	out = append(out, "Accept: "+f.media)
	if body {
		out = append(out, "Content-Type: "+f.media)
	}
	return out
}

// request re-encodes a JSON body for its route; "" or why it cannot.
func (f *format) request(method, path string, body []byte) ([]byte, string) {
	in, _ := route(method, path)
	if in == nil {
		return nil, "format " + f.to.Name() + ": not a route of the reference API with a body" // the step names it
	}
	v := in()
	if err := f.json.Unmarshal(body, v); err != nil {
		return nil, "format " + f.to.Name() + ": body is not the route's JSON"
	}
	b, err := f.to.Marshal(v)
	if err != nil {
		return nil, "format " + f.to.Name() + ": encode body"
	}
	return b, ""
}

// response decodes a 2xx response of the route into JSON for captures and
// checks (an error body as the API's error); "" or why it cannot.
func (f *format) response(method, path string, status int, body []byte) ([]byte, string) {
	_, out := route(method, path)
	var v any = new(api.Error)
	if status/100 == 2 {
		if out == nil {
			return nil, "format " + f.to.Name() + ": not a route of the reference API with a response body"
		}
		v = out()
	}
	if err := f.to.Unmarshal(body, v); err != nil {
		return nil, "decode " + f.to.Name() + " body"
	}
	b, err := f.json.Marshal(v)
	if err != nil {
		return nil, "decode " + f.to.Name() + " body"
	}
	return b, ""
}
