package grpcany

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"
)

// CallData is what a request template sees: {{.N}} (ghz's
// {{.RequestNumber}}) numbers the run's requests from 0, {{.I}} the
// messages of one stream; ghz's other names (.FullyQualifiedName,
// .MethodName, .ServiceName, .InputName, .OutputName, .IsClientStreaming,
// .IsServerStreaming, .Timestamp, .TimestampUnix, .TimestampUnixMilli,
// .TimestampUnixNano, .UUID, .WorkerID) mean what they mean there, as do
// the functions newUUID, randomString N and randomInt MIN MAX.
type CallData struct {
	N        int64
	I        int
	WorkerID int
	m        *Method
}

func (d *CallData) RequestNumber() int64       { return d.N }
func (d *CallData) FullyQualifiedName() string { return strings.ReplaceAll(d.m.Name(), "/", ".") }
func (d *CallData) MethodName() string         { return string(d.m.Desc.Name()) }
func (d *CallData) ServiceName() string        { return string(d.m.Desc.Parent().FullName()) }
func (d *CallData) InputName() string          { return string(d.m.Desc.Input().Name()) }
func (d *CallData) OutputName() string         { return string(d.m.Desc.Output().Name()) }
func (d *CallData) IsClientStreaming() bool    { return d.m.Desc.IsStreamingClient() }
func (d *CallData) IsServerStreaming() bool    { return d.m.Desc.IsStreamingServer() }
func (d *CallData) Timestamp() string          { return time.Now().Format(time.RFC3339) }
func (d *CallData) TimestampUnix() int64       { return time.Now().Unix() }
func (d *CallData) TimestampUnixMilli() int64  { return time.Now().UnixMilli() }
func (d *CallData) TimestampUnixNano() int64   { return time.Now().UnixNano() }
func (d *CallData) UUID() string               { return uuid.NewString() }

var funcs = template.FuncMap{
	"newUUID": uuid.NewString,
	"randomString": func(n int) string {
		if n <= 0 {
			n = 2 + rand.IntN(15)
		}
		const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		b := make([]byte, n)
		for i := range b {
			b[i] = letters[rand.IntN(len(letters))]
		}
		return string(b)
	},
	"randomInt": func(lo, hi int) int {
		if hi <= lo {
			return lo
		}
		return lo + rand.IntN(hi-lo)
	},
}

// request is one request template: JSON with template actions, or JSON
// alone, whose message is then encoded once.
type request struct {
	text   string
	t      *template.Template // nil: static
	static []byte             // static: the encoded gRPC message, prefix included
}

// Requests are the run's request templates, used in turn: --data's one,
// or a data file's lines.
type Requests struct {
	m    *Method
	reqs []request
	un   protojson.UnmarshalOptions
}

// NewRequests parses the templates (data, else the JSON lines of
// dataFile, else an empty message) and checks that each fits the method's
// input message, rendered for request 0.
func NewRequests(m *Method, data, dataFile string) (*Requests, error) {
	r := &Requests{m: m, un: protojson.UnmarshalOptions{Resolver: m.Types}}
	var texts []string
	var where []string
	switch {
	case data != "" && dataFile != "":
		return nil, fmt.Errorf("%w: --data or --data-file, not both", ErrOptions)
	case dataFile != "":
		f, err := os.Open(dataFile)
		if err != nil {
			return nil, fmt.Errorf("%w: --data-file: %v", ErrOptions, err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 16<<20)
		for line := 1; sc.Scan(); line++ {
			if s := strings.TrimSpace(sc.Text()); s != "" {
				texts = append(texts, s)
				where = append(where, dataFile+":"+strconv.Itoa(line))
			}
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("%w: --data-file: %v", ErrOptions, err)
		}
		if len(texts) == 0 {
			return nil, fmt.Errorf("%w: --data-file %s holds no JSON line", ErrOptions, dataFile)
		}
	case data != "":
		texts, where = []string{data}, []string{"--data"}
	default:
		texts, where = []string{"{}"}, []string{"the empty request"}
	}
	in := dynamicpb.NewMessage(m.Desc.Input())
	var buf bytes.Buffer
	for i, s := range texts {
		q := request{text: s}
		if strings.Contains(s, "{{") {
			t, err := template.New(where[i]).Funcs(funcs).Option("missingkey=error").Parse(s)
			if err != nil {
				return nil, fmt.Errorf("%w: %s: template: %v", ErrOptions, where[i], err)
			}
			q.t = t
		}
		r.reqs = append(r.reqs, q)
		// Request 0 checks the template against the message: a field it
		// does not have, a value of the wrong type.
		b, err := r.render(&buf, i, &CallData{m: m}, in)
		if err != nil {
			return nil, fmt.Errorf("%w: %s does not fit %s: %s", ErrOptions, where[i], m.Desc.Input().FullName(), protoMessage(err))
		}
		if q.t == nil {
			r.reqs[i].static = bytes.Clone(b)
		}
	}
	return r, nil
}

// Static reports whether every request is encoded once (no template
// action anywhere).
func (r *Requests) Static() bool {
	for _, q := range r.reqs {
		if q.t != nil {
			return false
		}
	}
	return true
}

// Encode renders request d.N (template d.N mod the templates) into in and
// returns it encoded as one gRPC message, prefix included, in buf's
// storage (valid until buf's next use). A static request's bytes are
// shared: the caller must not change them.
func (r *Requests) Encode(buf *bytes.Buffer, d *CallData, in *dynamicpb.Message) ([]byte, error) {
	i := int(uint64(d.N) % uint64(len(r.reqs)))
	if s := r.reqs[i].static; s != nil {
		return s, nil
	}
	return r.render(buf, i, d, in)
}

// Message renders request d.N into in (streams send messages, not bytes).
func (r *Requests) Message(buf *bytes.Buffer, d *CallData, in *dynamicpb.Message) error {
	i := int(uint64(d.N) % uint64(len(r.reqs)))
	q := &r.reqs[i]
	text := []byte(q.text)
	if q.t != nil {
		buf.Reset()
		if err := q.t.Execute(buf, d); err != nil {
			return err
		}
		text = buf.Bytes()
	}
	in.Reset()
	return r.un.Unmarshal(text, in)
}

// protoMessage is err's text without protobuf-go's "proto: " prefix
// (whose space is at random a non-breaking one, to discourage matching).
func protoMessage(err error) string {
	return strings.NewReplacer("proto:\u00a0", "", "proto: ", "").Replace(err.Error())
}

func (r *Requests) render(buf *bytes.Buffer, i int, d *CallData, in *dynamicpb.Message) ([]byte, error) {
	d.m = r.m
	q := &r.reqs[i]
	text := []byte(q.text)
	if q.t != nil {
		buf.Reset()
		if err := q.t.Execute(buf, d); err != nil {
			return nil, err
		}
		text = buf.Bytes()
	}
	in.Reset()
	if err := r.un.Unmarshal(text, in); err != nil {
		return nil, err
	}
	// The encoded message goes after the rendered text, in the same
	// buffer: one buffer per VU serves both.
	start := buf.Len()
	out := append(buf.AvailableBuffer(), 0, 0, 0, 0, 0)
	// AllowPartial: the unmarshal above already refused a message that
	// lacks a proto2 required field; checking again was ~2% of a call.
	out, err := proto.MarshalOptions{AllowPartial: true}.MarshalAppend(out, in)
	if err != nil {
		return nil, err
	}
	n := len(out) - 5
	out[1], out[2], out[3], out[4] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	buf.Write(out) // keep the storage for the next call
	return buf.Bytes()[start:], nil
}
