package replay

import (
	"bufio"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"

	"github.com/wirebench/wirebench/load/replay/reqlog"
)

// FormatGRPC is a recording of gRPC calls, one JSON object a line
// (replayed by package load/grpcany, not by this package's Scenario):
//
//	{"t": 1764388800.25, "grpc": "shop.Orders/Get", "data": {"id": "7"}, "md": {"authorization": "Bearer x"}, "code": "OK"}
//	{"t": 1764388800.31, "grpc": "shop.Orders/Get", "bin": "CgE3"}
//
//	t     when the call was made: Unix seconds, ms, µs or ns, a string of
//	      one, or RFC 3339 (as the jsonl format's); 0 or a small offset
//	      in seconds works too: only differences count
//	grpc  the method, pkg.Service/Method (or pkg.Service.Method)
//	data  the request message as JSON (protojson: needs the method's
//	      descriptors), or
//	bin   the request message as protobuf, base64 (sent as it is)
//	msgs  a client or bidi stream's request messages, a JSON array of
//	      them (protojson), or
//	bins  the same as protobuf, an array of base64 strings; [] is a
//	      stream that sent none (data and bin are a stream's one message)
//	md    metadata sent with the call (an object of strings), optional
//	code  the recorded status, by name or number, optional: the replayed
//	      call must end with it (else with OK)
//
// As a reqlog.Request, a call is Method GRPCJSON or GRPCProto (one
// message) or GRPCJSONMsgs or GRPCProtoMsgs (a list), Target
// "/pkg.Service/Method", Header the metadata, Body the message(s), and
// Status the recorded code + 1 (0: not recorded).
const FormatGRPC = "grpc"

// Methods of the reqlog.Requests a gRPC recording yields.
const (
	GRPCJSON      = "grpc+json"   // Body is protojson
	GRPCProto     = "grpc+proto"  // Body is the protobuf message
	GRPCJSONMsgs  = "grpc+json*"  // Body is a JSON array of protojson messages
	GRPCProtoMsgs = "grpc+proto*" // Body is protobuf messages, each behind gRPC's 5-byte prefix (GRPCFrames reads them)
)

// GRPCFrames calls each with the messages of a GRPCProtoMsgs body in turn.
func GRPCFrames(body []byte, each func(msg []byte) error) error {
	for len(body) > 0 {
		if len(body) < 5 {
			return fmt.Errorf("a message prefix of %d bytes", len(body))
		}
		n := binary.BigEndian.Uint32(body[1:5])
		if uint64(n) > uint64(len(body)-5) {
			return fmt.Errorf("a message of %d bytes in %d", n, len(body)-5)
		}
		if err := each(body[5 : 5+n]); err != nil {
			return err
		}
		body = body[5+n:]
	}
	return nil
}

type grpcReader struct {
	lines *reqlog.Lines
	bad   reqlog.Malformed
}

func newGRPCReader(r io.Reader) *grpcReader {
	g := &grpcReader{}
	g.lines = reqlog.NewLines(r, &g.bad)
	return g
}

func (g *grpcReader) Malformed() *reqlog.Malformed { return &g.bad }

func (g *grpcReader) Next() (reqlog.Request, error) {
	for {
		b, err := g.lines.Next()
		if err != nil {
			return reqlog.Request{}, err
		}
		req, why := parseGRPCCall(b)
		if why != "" {
			g.bad.Add(g.lines.No, why)
			continue
		}
		return req, nil
	}
}

// grpcCall is a line of FormatGRPC.
type grpcCall struct {
	T    json.RawMessage   `json:"t"`
	GRPC string            `json:"grpc"`
	Data json.RawMessage   `json:"data"`
	Bin  *string           `json:"bin"`
	Msgs json.RawMessage   `json:"msgs"`
	Bins *[]string         `json:"bins"`
	MD   map[string]string `json:"md"`
	Code json.RawMessage   `json:"code"`
}

func parseGRPCCall(b []byte) (reqlog.Request, string) {
	var req reqlog.Request
	var c grpcCall
	if err := json.Unmarshal(b, &c); err != nil {
		return req, "not a JSON object of a gRPC call: " + shorten([]byte(err.Error()))
	}
	if len(c.T) == 0 {
		return req, `no "t" (time)`
	}
	var tv any
	d := json.NewDecoder(strings.NewReader(string(c.T)))
	d.UseNumber()
	if d.Decode(&tv) != nil {
		return req, fmt.Sprintf("bad time %s", shorten(c.T))
	}
	if n, ok := tv.(json.Number); ok && n.String() == "0" {
		req.At = 0
	} else if req.At, ok = parseTime(tv); !ok {
		return req, fmt.Sprintf("bad time %s", shorten(c.T))
	}
	svc, m, ok := strings.Cut(strings.TrimPrefix(c.GRPC, "/"), "/")
	if !ok {
		if i := strings.LastIndexByte(c.GRPC, '.'); i > 0 {
			svc, m, ok = c.GRPC[:i], c.GRPC[i+1:], true
		}
	}
	if !ok || svc == "" || m == "" || strings.ContainsAny(svc+m, "/ ") {
		return req, fmt.Sprintf(`no or bad "grpc" method %q: want pkg.Service/Method`, shorten([]byte(c.GRPC)))
	}
	req.Target = "/" + svc + "/" + m
	given := 0
	for _, set := range []bool{c.Bin != nil, len(c.Data) > 0, len(c.Msgs) > 0, c.Bins != nil} {
		if set {
			given++
		}
	}
	switch {
	case given > 1:
		return req, `"data", "bin", "msgs" and "bins" exclude each other`
	case len(c.Msgs) > 0:
		var msgs []json.RawMessage
		if json.Unmarshal(c.Msgs, &msgs) != nil {
			return req, `"msgs": not an array of messages`
		}
		req.Method, req.Body = GRPCJSONMsgs, c.Msgs
	case c.Bins != nil:
		req.Method, req.Body = GRPCProtoMsgs, []byte{}
		for _, b64 := range *c.Bins {
			msg, err := base64.StdEncoding.DecodeString(b64)
			if err != nil {
				return req, `"bins": not base64`
			}
			req.Body = binary.BigEndian.AppendUint32(append(req.Body, 0), uint32(len(msg)))
			req.Body = append(req.Body, msg...)
		}
	case c.Bin != nil:
		body, err := base64.StdEncoding.DecodeString(*c.Bin)
		if err != nil {
			return req, `"bin": not base64`
		}
		req.Method, req.Body = GRPCProto, body
	default:
		req.Method, req.Body = GRPCJSON, c.Data
		if len(req.Body) == 0 || string(req.Body) == "null" {
			req.Body = []byte("{}")
		}
	}
	for k, v := range c.MD {
		k = strings.ToLower(k)
		if !reqlog.ValidHeader(k, v) || strings.HasPrefix(k, ":") {
			return req, fmt.Sprintf("bad metadata %q", shorten([]byte(k)))
		}
		req.Header = append(req.Header, [2]string{k, v})
	}
	if len(c.Code) > 0 {
		code, ok := parseCode(c.Code)
		if !ok {
			return req, fmt.Sprintf("bad code %s", shorten(c.Code))
		}
		req.Status = int(code) + 1
	}
	return req, ""
}

// parseCode reads a status code by number or name (OK, NotFound, or
// NOT_FOUND as in the proto enum).
func parseCode(raw json.RawMessage) (codes.Code, bool) {
	var n uint32
	if json.Unmarshal(raw, &n) == nil {
		return codes.Code(n), n <= 16
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return 0, false
	}
	if n, err := strconv.ParseUint(s, 10, 32); err == nil && n <= 16 {
		return codes.Code(n), true
	}
	key := strings.ToLower(strings.ReplaceAll(s, "_", ""))
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		if strings.ToLower(c.String()) == key {
			return c, true
		}
	}
	return 0, false
}

// IsGRPCRecording reports whether the file at path is a recording of
// gRPC calls (FormatGRPC): its first line is an object whose first key
// is "grpc", or that holds a "grpc" key and no "method" (so a JSON-lines
// HTTP log with a field named grpc is not taken for one).
func IsGRPCRecording(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return sniff(bufio.NewReader(f), path) == FormatGRPC
}
