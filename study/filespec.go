package study

import (
	"time"

	yaml "go.yaml.in/yaml/v3"
)

// The schema of a study file. Field names are the YAML keys; the walker
// (filewalk.go) checks a file against these types before decoding.
type fileSpec struct {
	Name        string        `yaml:"name"`
	Title       string        `yaml:"title"`
	Description string        `yaml:"description"`
	Question    string        `yaml:"question"`
	Answer      *answerSpec   `yaml:"answer"`
	Trials      int           `yaml:"trials"`
	Warmup      time.Duration `yaml:"warmup"`
	Duration    time.Duration `yaml:"duration"`
	Seed        int64         `yaml:"seed"`
	Baseline    string        `yaml:"baseline"`
	Order       string        `yaml:"order"`
	// Measure is throughput (the load as given, the default) or capacity:
	// per trial, the highest open-loop rate that meets SLO (capacity.go).
	Measure  string        `yaml:"measure"`
	SLO      []string      `yaml:"slo"`
	Capacity *capacitySpec `yaml:"capacity"`
	Build    *commandSpec  `yaml:"build"`
	Server   *serverSpec   `yaml:"server"`
	Load     *loadSpec     `yaml:"load"`
	Check    *commandSpec  `yaml:"check"`
	Cells    []cellSpec    `yaml:"cells"`
	// Links is the links axis: every cell on each emulated network
	// (presets or link specs, "none" for loopback; links.go).
	Links []string `yaml:"links"`
	// Data serves the user's records to the reference-server cells
	// (data.go; study --data).
	Data *dataSpec `yaml:"data"`
}

type dataSpec struct {
	File     string   `yaml:"file"`
	Key      string   `yaml:"key"`
	Proto    string   `yaml:"proto"`
	Protoset string   `yaml:"protoset"`
	Message  string   `yaml:"message"`
	Formats  []string `yaml:"formats"`
}

type cellSpec struct {
	Name  string `yaml:"name"`
	Group string `yaml:"group"`
	// Rev is a git revision: the cell is built and run from a checkout
	// of it (rev.go).
	Rev string `yaml:"rev"`
	// URL is a server already running: no process per trial.
	URL    string       `yaml:"url"`
	Build  *commandSpec `yaml:"build"`
	Server *serverSpec  `yaml:"server"`
	Load   *loadSpec    `yaml:"load"`
	Check  *commandSpec `yaml:"check"`
}

type serverSpec struct {
	Command      []string          `yaml:"command"`
	Dir          string            `yaml:"dir"`
	Env          map[string]string `yaml:"env"`
	Ready        string            `yaml:"ready"`
	ReadyTimeout time.Duration     `yaml:"ready_timeout"`
	StopSignal   string            `yaml:"stop_signal"`
	StopGrace    time.Duration     `yaml:"stop_grace"`
	CPUQuota     float64           `yaml:"cpu_quota"`
}

type commandSpec struct {
	Command []string          `yaml:"command"`
	Dir     string            `yaml:"dir"`
	Env     map[string]string `yaml:"env"`
	Timeout time.Duration     `yaml:"timeout"`
}

type loadSpec struct {
	URL                string            `yaml:"url"`
	Method             string            `yaml:"method"`
	Headers            map[string]string `yaml:"headers"`
	Body               string            `yaml:"body"`
	BodyFile           string            `yaml:"body_file"`
	ExpectStatus       intList           `yaml:"expect_status"`
	ExpectBodyContains string            `yaml:"expect_body_contains"`
	Concurrency        int               `yaml:"concurrency"`
	Requests           int64             `yaml:"requests"`
	Rate               float64           `yaml:"rate"`
	Open               bool              `yaml:"open"`
	Arrivals           string            `yaml:"arrivals"`
	ArrivalsSeed       int64             `yaml:"arrivals_seed"`
	Stages             []stageSpec       `yaml:"stages"`
	Timeout            time.Duration     `yaml:"timeout"`
	Transport          string            `yaml:"transport"`
	Insecure           bool              `yaml:"insecure"` // https://: no certificate check (a server's generated one)
	// https:// (and gRPC over TLS): the CA certificates to verify the
	// server against, and a client certificate for a server that asks
	// for one; PEM files, relative to the study file.
	CAFile      string `yaml:"ca_file"`
	CertFile    string `yaml:"cert_file"`
	KeyFile     string `yaml:"key_file"`
	Connections int    `yaml:"connections"`
	NoKeepAlive bool   `yaml:"no_keepalive"`
	Scenario    string `yaml:"scenario"`
	Format      string `yaml:"format"`
	Compression string `yaml:"compression"`
	// Flow runs a flow file's steps against url (load/flow), fed by
	// DataFile; Replay sends a recording to url at its recorded times ×
	// 1/Speed (load/replay), AsFormat re-encoding its bodies.
	Flow     string  `yaml:"flow"`
	DataFile string  `yaml:"data_file"`
	Replay   string  `yaml:"replay"`
	Speed    float64 `yaml:"speed"`
	AsFormat string  `yaml:"as_format"`
	Loop     bool    `yaml:"loop"`
	// The key-value scenarios' (scenario: kv-set, kv-get, kv-mixed), named
	// as wirebench load's flags (memtier_benchmark's where it has one).
	Protocol      string  `yaml:"protocol"`
	Pipeline      int     `yaml:"pipeline"`
	Keys          int     `yaml:"keys"`
	KeyMinimum    int64   `yaml:"key_minimum"`
	KeyMaximum    int64   `yaml:"key_maximum"`
	KeyDist       string  `yaml:"key_dist"`
	ValueSize     int     `yaml:"value_size"`
	DataSizeRange string  `yaml:"data_size_range"`
	DataSizeList  string  `yaml:"data_size_list"`
	Ratio         string  `yaml:"ratio"`
	ExpiryRange   string  `yaml:"expiry_range"`
	MissRatio     float64 `yaml:"miss_ratio"`
	KVSeed        int64   `yaml:"seed"`
	NoPreload     bool    `yaml:"no_preload"`
	// GRPC calls one method of any gRPC server at url (host:port,
	// load/grpcany): its descriptors from Proto (with ImportPaths),
	// Protoset, or the server's reflection; requests from Data (a JSON
	// template) or DataFile (JSON lines); headers are its metadata;
	// protocol is grpc, grpc-web or connect.
	GRPC        string  `yaml:"grpc"`
	Proto       strList `yaml:"proto"`
	ImportPaths strList `yaml:"import_paths"`
	Protoset    string  `yaml:"protoset"`
	Data        string  `yaml:"data"`
	Expect      strList `yaml:"expect"`
	Messages    int     `yaml:"messages"`
}

// strList is one string or a list of them (proto: a.proto or [a.proto, b.proto]).
type strList []string

func (l *strList) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.SequenceNode {
		return n.Decode((*[]string)(l))
	}
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	*l = strList{s}
	return nil
}

// kvLoadKeys are loadSpec's key-value keys: refused outside kv-*.
var kvLoadKeys = []string{"protocol", "pipeline", "keys", "key_minimum", "key_maximum", "key_dist", "value_size",
	"data_size_range", "data_size_list", "ratio", "expiry_range", "miss_ratio", "seed", "no_preload"}

// capacitySpec tunes the capacity search (zero: capacity's defaults).
type capacitySpec struct {
	MinRate         float64       `yaml:"min_rate"`
	MaxRate         float64       `yaml:"max_rate"`
	StartRate       float64       `yaml:"start_rate"`
	Growth          float64       `yaml:"growth"`
	Precision       float64       `yaml:"precision"`
	StepDuration    time.Duration `yaml:"step_duration"`
	StepWarmup      time.Duration `yaml:"step_warmup"`
	ConfirmDuration time.Duration `yaml:"confirm_duration"`
	MaxTime         time.Duration `yaml:"max_time"`
}

type stageSpec struct {
	Duration time.Duration `yaml:"duration"`
	Target   float64       `yaml:"target"`
}

// intList is one integer or a list of them (expect_status: 200 or [200, 201]).
type intList []int

func (l *intList) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.SequenceNode {
		return n.Decode((*[]int)(l))
	}
	var i int
	if err := n.Decode(&i); err != nil {
		return err
	}
	*l = intList{i}
	return nil
}

// merge returns base's mapping with over's keys replacing base's (one
// level: a cell's server.env replaces the default env as a whole). Nil
// when both are absent.
func merge(base, over *yaml.Node) *yaml.Node {
	switch {
	case base == nil || isNull(base):
		if over == nil || isNull(over) {
			return nil
		}
		return over
	case over == nil || isNull(over):
		return base
	}
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: over.Line, Column: over.Column}
	for i := 0; i+1 < len(base.Content); i += 2 {
		if _, overridden := keyNode(over, base.Content[i].Value); !overridden {
			out.Content = append(out.Content, base.Content[i], base.Content[i+1])
		}
	}
	out.Content = append(out.Content, over.Content...)
	return out
}

// keyNode returns the key node of key in mapping n.
func keyNode(n *yaml.Node, key string) (*yaml.Node, bool) {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i], true
		}
	}
	return nil, false
}

// valueNode returns the value of key in mapping n, or nil.
func valueNode(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// isSet reports whether mapping n gives key a value (null unsets a default).
func isSet(n *yaml.Node, key string) bool {
	v := valueNode(n, key)
	return v != nil && !isNull(v)
}

// lineOf is the line of key in mapping n, 0 when absent.
func lineOf(n *yaml.Node, key string) int {
	if k, ok := keyNode(n, key); ok {
		return k.Line
	}
	return 0
}
