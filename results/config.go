package results

import (
	"bytes"
	"cmp"
	"encoding/json"
	"strings"
	"time"
)

// Config is what made a load run or a capacity search: the command line
// and the client's options, under the key that names the client ("raw",
// "scenario_options", "kv_options", "grpc", "stream", "browser",
// "replay"). The JSON keys are those of the files written before it was a
// typed record, which read into it unchanged.
type Config struct {
	Scenario string `json:"scenario,omitempty"`
	// Args is the command line as given, every flag (fairness rule 8).
	Args []string `json:"args,omitempty"`
	// Thresholds are the --threshold expressions: wirebench merge
	// evaluates them again on the merged result.
	Thresholds []string `json:"thresholds,omitempty"`

	Raw             *ClientOptions `json:"raw,omitempty"`
	ScenarioOptions *ClientOptions `json:"scenario_options,omitempty"`
	KVOptions       *ClientOptions `json:"kv_options,omitempty"`
	GRPC            *ClientOptions `json:"grpc,omitempty"`
	Stream          *ClientOptions `json:"stream,omitempty"`
	Browser         *ClientOptions `json:"browser,omitempty"`
	// Replay is a replay's options, or in a load run's result its options
	// beside what the recording held (ReplayRun).
	Replay *ClientOptions `json:"replay,omitempty"`

	// BodyBytes is raw mode's request body size (-b).
	BodyBytes int `json:"body_bytes,omitempty"`
	// Record is the request log raw mode wrote (--record).
	Record string `json:"record,omitempty"`
	// Kind is a gRPC method's kind (unary, server streaming…).
	Kind string `json:"kind,omitempty"`
	// A flow run's file, name, step count, target and transport (auto's
	// choice is in the result's Conn), and its data file and rows.
	Flow      string `json:"flow,omitempty"`
	FlowName  string `json:"flow_name,omitempty"`
	Steps     int    `json:"steps,omitempty"`
	URL       string `json:"url,omitempty"`
	Transport string `json:"transport,omitempty"`
	DataFile  string `json:"data_file,omitempty"`
	DataRows  int    `json:"data_rows,omitempty"`

	// Recording and Speed are a replay's capacity search: the recording's
	// own rate and the answer as a speed factor of it.
	Recording *Recording  `json:"recording,omitempty"`
	Speed     *SpeedRange `json:"speed,omitempty"`

	// OldAuto, OldHandshakes and OldZeroRTT are read from files written
	// before Conn, which kept the connection set-up here; reading moves
	// them into Conn (schema.go), so they are never written.
	OldAuto       string          `json:"auto,omitempty"`
	OldHandshakes []time.Duration `json:"h3_handshakes_ns,omitempty"`
	OldZeroRTT    *OldZeroRTT     `json:"h3_0rtt,omitempty"`
}

// OldZeroRTT is 0-RTT as files written before Conn kept it: the counts
// under their Go names.
type OldZeroRTT struct {
	ZeroRTT
	Used          int64 `json:"Used"`
	EarlyRequests int64 `json:"EarlyRequests"`
	Refused       int64 `json:"Refused"`
	NoEarly       int64 `json:"NoEarly"`
}

// Recording is what a replayed recording held.
type Recording struct {
	Requests  int64         `json:"requests"`
	Period    time.Duration `json:"period_ns"`
	Rate      float64       `json:"rate"`
	Malformed int64         `json:"malformed"`
}

// SpeedRange is a replay capacity's answer as speed factors of the
// recording: the answer, and the range the true one lies in.
type SpeedRange struct {
	Answer float64 `json:"answer"`
	Low    float64 `json:"low"`
	High   float64 `json:"high"`
}

// UnmarshalJSON reads a speed range; a bare number (a study cell's replay
// speed, which capacity results in study files written before Config was
// typed carried under the same key) is no range and reads as none.
func (s *SpeedRange) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || b[0] != '{' {
		return nil
	}
	type plain SpeedRange
	return json.Unmarshal(b, (*plain)(s))
}

// ReplayRun is a replay load run's record: its options and what the
// recording held and the run sent.
type ReplayRun struct {
	Options           *ClientOptions `json:"options"`
	Scheduled         int64          `json:"scheduled"`
	Malformed         int64          `json:"malformed"`
	MalformedExamples []string       `json:"malformed_examples"`
	Reordered         int64          `json:"reordered"`
	Passes            int            `json:"passes"`
	Span              time.Duration  `json:"span_ns"`
	Recorded          int64          `json:"recorded"`
	// PassRequests are the well-formed requests of one pass over the
	// recording: what a whole pass sends.
	PassRequests  int64         `json:"pass_requests,omitempty"`
	RecordingRead bool          `json:"recording_read"`
	ShareSent     float64       `json:"share_sent"`
	GapsCut       int64         `json:"gaps_cut"`
	LongestGap    time.Duration `json:"longest_gap_ns"`
}

// ClientOptions are one client's options as the client wrote them, kept
// whole: each client (load/…) owns its options type and results imports no
// client, so they are carried as that client's JSON, and the target they
// name is read once, when they are recorded or read, into typed fields.
type ClientOptions struct {
	// URL and Transport are the target the options name ("" when they name
	// none); Kind a stream's kind and Protocol a KV or gRPC client's
	// protocol. Derived from the options: not written apart from them.
	URL       string `json:"-"`
	Transport string `json:"-"`
	Kind      string `json:"-"`
	Protocol  string `json:"-"`

	raw    json.RawMessage
	object bool // raw is a JSON object (a study cell's "grpc" was a name)
}

// NewClientOptions records a client's options: v is the client's options
// value (load.RawOptions, scenario.Options, …), written in its own JSON
// form. A value that cannot be written records nothing.
func NewClientOptions(v any) *ClientOptions {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	c := &ClientOptions{}
	if c.UnmarshalJSON(b) != nil {
		return nil
	}
	return c
}

// MarshalJSON writes the options as the client wrote them.
func (c ClientOptions) MarshalJSON() ([]byte, error) {
	if len(c.raw) == 0 {
		return []byte("null"), nil
	}
	return c.raw, nil
}

// Rewrite replaces the options' JSON with f's (a result file's redaction
// of the credentials they were given), their target read again from it;
// JSON that does not parse leaves them as they were.
func (c *ClientOptions) Rewrite(f func([]byte) []byte) {
	if c == nil || len(c.raw) == 0 {
		return
	}
	var n ClientOptions
	if n.UnmarshalJSON(f(c.raw)) == nil {
		*c = n
	}
}

// Clients are the options of every client the config names.
func (c *Config) Clients() []*ClientOptions {
	var out []*ClientOptions
	for _, o := range []*ClientOptions{c.Raw, c.ScenarioOptions, c.KVOptions, c.GRPC, c.Stream, c.Browser, c.Replay} {
		if o != nil {
			out = append(out, o)
		}
	}
	return out
}

// UnmarshalJSON keeps the options whole and reads their target. Options
// are usually an object; a replay load run's wraps them under "options"
// (ReplayRun); files written before the clients' options had JSON names
// spell the target "URL" and "Transport".
func (c *ClientOptions) UnmarshalJSON(b []byte) error {
	c.raw = bytes.Clone(b)
	var t struct {
		URL          string         `json:"url"`
		URLOld       string         `json:"URL"`
		Transport    string         `json:"transport"`
		TransportOld string         `json:"Transport"`
		Kind         string         `json:"kind"`
		Protocol     string         `json:"protocol"`
		Options      *ClientOptions `json:"options"`
	}
	if len(b) == 0 || b[0] != '{' {
		return nil // a study cell's "grpc": method name, say: nothing to read
	}
	c.object = true
	if err := json.Unmarshal(b, &t); err != nil {
		return err
	}
	if o := t.Options; o != nil {
		c.URL, c.Transport, c.Kind, c.Protocol = o.URL, o.Transport, o.Kind, o.Protocol
		return nil
	}
	c.URL, c.Transport = cmp.Or(t.URL, t.URLOld), cmp.Or(t.Transport, t.TransportOld)
	c.Kind, c.Protocol = t.Kind, t.Protocol
	return nil
}

// StudyOptions are a study run's own options.
type StudyOptions struct {
	Trials         int      `json:"trials,omitempty"`
	Warmup         string   `json:"warmup,omitempty"`   // as time.Duration prints it
	Duration       string   `json:"duration,omitempty"` // as time.Duration prints it
	Seed           int64    `json:"seed,omitempty"`
	Quick          bool     `json:"quick,omitempty"`
	ClientCPUs     []int    `json:"client_cpus,omitempty"`
	ServerCPUs     []int    `json:"server_cpus,omitempty"`
	Binary         string   `json:"binary,omitempty"`
	ServeArgs      []string `json:"serve_args,omitempty"`
	Order          string   `json:"order,omitempty"` // shuffled, abba…
	ServerCPUQuota float64  `json:"server_cpu_quota,omitempty"`
	StudyFile      string   `json:"study_file,omitempty"`
	Builds         []string `json:"builds,omitempty"`
	// Links are the links every cell ran across (--links, links:).
	Links []string `json:"links,omitempty"`
}

// CellLoad is a study cell's client: its scenario and the options that
// differ between cells, flat (the keys a reader compares across cells).
type CellLoad struct {
	Scenario    string `json:"scenario,omitempty"`
	Concurrency int    `json:"concurrency,omitempty"`
	URL         string `json:"url,omitempty"`
	Transport   string `json:"transport,omitempty"`
	Format      string `json:"format,omitempty"`
	Connections int    `json:"connections,omitempty"`
	NoKeepAlive bool   `json:"no_keepalive,omitempty"`
	Compression string `json:"compression,omitempty"`
	Client      string `json:"client,omitempty"`
	Protocol    string `json:"protocol,omitempty"`

	// Raw mode.
	Method             string   `json:"method,omitempty"`
	Headers            []string `json:"headers,omitempty"`
	BodyBytes          int      `json:"body_bytes,omitempty"`
	ExpectStatus       []int    `json:"expect_status,omitempty"`
	ExpectBodyContains string   `json:"expect_body_contains,omitempty"`

	// Streams and the browser.
	Kind      string `json:"kind,omitempty"`
	Messages  int    `json:"messages,omitempty"`
	Batch     int    `json:"batch,omitempty"`
	InBrowser bool   `json:"in_browser,omitempty"`

	// Flows.
	Flow     string `json:"flow,omitempty"`
	Steps    int    `json:"steps,omitempty"`
	DataFile string `json:"data_file,omitempty"`
	DataRows int    `json:"data_rows,omitempty"`

	// Replays.
	Replay   string  `json:"replay,omitempty"`
	Speed    float64 `json:"speed,omitempty"`
	Loop     bool    `json:"loop,omitempty"`
	AsFormat string  `json:"as_format,omitempty"`

	// Any gRPC method.
	GRPC     string   `json:"grpc,omitempty"`
	Proto    []string `json:"proto,omitempty"`
	Protoset string   `json:"protoset,omitempty"`
	Data     string   `json:"data,omitempty"`
	Expect   []string `json:"expect,omitempty"`

	// The KV scenarios.
	Keys        int     `json:"keys,omitempty"`
	ValueSize   int     `json:"value_size,omitempty"`
	Pipeline    int     `json:"pipeline,omitempty"`
	KeyDist     string  `json:"key_dist,omitempty"`
	ValueSizes  string  `json:"value_sizes,omitempty"`
	Ratio       string  `json:"ratio,omitempty"`
	ExpiryRange string  `json:"expiry_range,omitempty"`
	MissRatio   float64 `json:"miss_ratio,omitempty"`
	Seed        uint64  `json:"seed,omitempty"`
	KeyMinimum  int64   `json:"key_minimum,omitempty"`

	// The load's own options.
	Rate     float64 `json:"rate,omitempty"`
	Requests int64   `json:"requests,omitempty"`
	Stages   []Stage `json:"stages,omitempty"`
	Open     bool    `json:"open,omitempty"`
	Timeout  string  `json:"timeout,omitempty"` // as time.Duration prints it

	// Measure is "capacity" for a cell that searched its capacity within
	// SLO.
	Measure string   `json:"measure,omitempty"`
	SLO     []string `json:"slo,omitempty"`
}

// transport is the transport and URL the configuration's client named
// (LoadTransport's rule, for a result without a Conn); "" when it does
// not say. scenario is the result's own, when the configuration's is empty.
func (c *Config) transport(scenario string) (transport, url string) {
	scenario = cmp.Or(scenario, c.Scenario)
	if kv := c.KVOptions; kv != nil || strings.HasPrefix(scenario, "kv-") {
		var p, u string
		if kv != nil {
			p, u = kv.Protocol, kv.URL
		}
		return kvTransport(p, u)
	}
	for _, o := range []*ClientOptions{c.Raw, c.ScenarioOptions, c.Stream, c.Replay} {
		if o == nil || !o.object {
			continue
		}
		t := o.Transport
		if t == "" && o.Kind != "" {
			t = streamTransport(o.Kind)
		}
		return cmp.Or(t, "http1"), o.URL
	}
	return "", ""
}

// Target is the transport and URL a study cell's client used; "" when
// its description does not say.
func (c *CellLoad) Target() (transport, url string) {
	if strings.HasPrefix(c.Scenario, "kv-") {
		return kvTransport(c.Protocol, c.URL)
	}
	if c.Transport == "" {
		return "", ""
	}
	return c.Transport, c.URL
}

// kvTransport is the transport of the KV scenarios: RESP, or HTTP/1.1 to
// the KV store's HTTP face.
func kvTransport(protocol, url string) (transport, u string) {
	if strings.HasPrefix(protocol, "http") {
		return "http1", url
	}
	return "resp", ""
}
