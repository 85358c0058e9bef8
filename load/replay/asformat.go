package replay

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/codec"
)

// AsFormats are the wire formats Options.AsFormat takes: the reference
// API's (package codec), whose request bodies a replay can re-encode.
var AsFormats = []string{"json", "toon", "cbor", "msgpack", "protobuf"}

// asFormat re-encodes the reference API's recorded JSON request bodies
// into another of its formats and asks for replies in it, so that one
// recording compares formats on its own request mix.
type asFormat struct {
	json, to codec.Codec
	media    string // Content-Type and Accept sent
}

func newAsFormat(name string) (*asFormat, error) {
	if !slices.Contains(AsFormats, name) {
		return nil, fmt.Errorf("%w: as-format %q: want one of %s", ErrReplay, name, strings.Join(AsFormats, ", "))
	}
	e := codec.MustLookup(name)
	return &asFormat{json: codec.MustLookup("json").Codec, to: e.Codec, media: e.MediaTypes[0]}, nil
}

// bodyType is the API type a request to target with a body decodes
// into (the reference API's routes, httpapi/server.go); nil: none.
func bodyType(method, target string) any {
	path, _, _ := strings.Cut(target, "?")
	switch {
	case method == "POST" && path == "/echo":
		return new(api.EchoRequest)
	case method == "POST" && path == "/users", method == "PUT" && isItem(path, "/users/"):
		return new(api.User)
	case method == "POST" && path == "/todos", method == "PUT" && isItem(path, "/todos/"):
		return new(api.Todo)
	}
	return nil
}

// isItem: path is prefix and one non-empty segment.
func isItem(path, prefix string) bool {
	id, ok := strings.CutPrefix(path, prefix)
	return ok && id != "" && !strings.Contains(id, "/")
}

// ErrAsFormat is a recorded body that is not the reference API's JSON
// for its route: the request is not sent, and fails with this reason.
var ErrAsFormat = fmt.Errorf("%w: as-format: recorded body is not the API's JSON for its route", ErrReplay)

// request re-encodes body (JSON, the API type of method and target) and
// sets hdr's Content-Type and Accept to the format's media type. A request
// without a body only gets Accept.
func (a *asFormat) request(method, target string, hdr []string, body []byte) ([]string, []byte, error) {
	out := hdr[:0]
	for _, h := range hdr {
		k, _, _ := strings.Cut(h, ":")
		if k = strings.TrimSpace(k); !strings.EqualFold(k, "content-type") && !strings.EqualFold(k, "accept") {
			out = append(out, h)
		}
	}
	out = append(out, "Accept: "+a.media)
	if len(body) == 0 {
		return out, body, nil
	}
	v := bodyType(method, target)
	if v == nil {
		return out, nil, fmt.Errorf("%w (%s %s takes no body)", ErrAsFormat, method, target)
	}
	if err := a.json.Unmarshal(body, v); err != nil {
		return out, nil, fmt.Errorf("%w (%s %s: %v)", ErrAsFormat, method, target, err)
	}
	b, err := a.to.Marshal(v)
	if err != nil {
		return out, nil, fmt.Errorf("%w (%s %s: %s: %v)", ErrAsFormat, method, target, a.to.Name(), err)
	}
	return append(out, "Content-Type: "+a.media), b, nil
}
