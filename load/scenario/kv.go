package scenario

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"sync"
	"time"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/h1"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// KV scenario names: the key-value workloads of redis-benchmark (-t set,
// get) against any server speaking RESP, or wirebench's /kv over HTTP.
const (
	ScenarioKVSet   = "kv-set"   // SET (PUT /kv/{key}) of random keys
	ScenarioKVGet   = "kv-get"   // GET of random keys, preloaded first, every value checked
	ScenarioKVMixed = "kv-mixed" // half SET, half GET, preloaded first
)

// KV protocols.
const (
	ProtocolRESP     = "resp"      // RESP2 to redis://host:port
	ProtocolHTTPRaw  = "http-raw"  // /kv/{key} with application/octet-stream bodies
	ProtocolHTTPJSON = "http-json" // /kv/{key} with {"value": ...} JSON bodies
)

// KV defaults: redis-benchmark's -r and -d as the seed ran them (its -d
// default is 3 bytes; the seed asked for 128).
const (
	DefaultKVKeys      = 10000
	DefaultKVValueSize = 128
	// maxKVValueSize bounds --value-size: a checked value must fit the
	// client's own reply limits (maxRESPBulk, maxBody) with room to spare.
	maxKVValueSize = 16 << 20
	// maxKVPipeline bounds -P: redis-benchmark has no bound, but P
	// commands of one VU are buffered whole, and depths past a few
	// hundred measure the client's buffers, not the server.
	maxKVPipeline = 4096
	// kvKeyDigits is the width of the key number: redis-benchmark's
	// key:__rand_int__ becomes key:000000001234.
	kvKeyDigits = 12
)

// KVOptions configure a KV scenario.
type KVOptions struct {
	Name     string `json:"name"`     // kv-set, kv-get, kv-mixed
	Protocol string `json:"protocol"` // resp (default), http-raw, http-json
	// URL is redis://host:port for RESP, http://host:port for HTTP.
	URL string `json:"url"`
	// Keys is the key space: keys key:000000000000 .. key:<Keys-1>
	// (redis-benchmark -r). Default 10000.
	Keys int `json:"keys"`
	// ValueSize is the value length in bytes (redis-benchmark -d).
	// Default 128.
	ValueSize int `json:"value_size"`
	// Pipeline is the depth (redis-benchmark -P): each VU writes this many
	// commands, then reads as many replies. RESP only; default 1.
	Pipeline int           `json:"pipeline"`
	Timeout  time.Duration `json:"timeout"`
	// NoPreload skips the preload of kv-get and kv-mixed: the key space
	// is already there (written by an earlier run, perhaps over another
	// protocol, whose values this run then checks).
	NoPreload bool `json:"no_preload,omitempty"`
}

// kvScenario is the Scenario of the KV workloads.
type kvScenario struct {
	o    KVOptions
	addr string
	ops  []string

	once       sync.Once
	preloadErr error
}

// KV op indexes: kv-mixed has both, kv-set and kv-get one each.
const (
	kvOpSet = 0
	kvOpGet = 1
)

// NewKV validates o; connections are made lazily (the preload of kv-get
// and kv-mixed at the first VU).
func NewKV(o KVOptions) (load.Scenario, error) {
	if o.Protocol == "" {
		o.Protocol = ProtocolRESP
	}
	if o.Keys == 0 {
		o.Keys = DefaultKVKeys
	}
	if o.ValueSize == 0 {
		o.ValueSize = DefaultKVValueSize
	}
	if o.Pipeline == 0 {
		o.Pipeline = 1
	}
	if o.Timeout == 0 {
		o.Timeout = 10 * time.Second
	}
	s := &kvScenario{o: o}
	switch o.Name {
	case ScenarioKVSet:
		s.ops = []string{"SET"}
	case ScenarioKVGet:
		s.ops = []string{"GET"}
	case ScenarioKVMixed:
		s.ops = []string{"SET", "GET"}
	default:
		return nil, fmt.Errorf("%w: scenario %q (want kv-set, kv-get, kv-mixed)", load.ErrOptions, o.Name)
	}
	switch {
	case o.Keys < 1:
		return nil, fmt.Errorf("%w: --keys %d: want at least 1", load.ErrOptions, o.Keys)
	case int64(o.Keys) > 999_999_999_999:
		return nil, fmt.Errorf("%w: --keys %d: at most 12 digits", load.ErrOptions, o.Keys)
	case o.ValueSize < 1 || o.ValueSize > maxKVValueSize:
		return nil, fmt.Errorf("%w: --value-size %d: want 1..%d bytes", load.ErrOptions, o.ValueSize, maxKVValueSize)
	case o.Pipeline < 1 || o.Pipeline > maxKVPipeline:
		return nil, fmt.Errorf("%w: -P %d: want 1..%d", load.ErrOptions, o.Pipeline, maxKVPipeline)
	case o.Pipeline > 1 && o.Protocol != ProtocolRESP:
		return nil, fmt.Errorf("%w: -P %d: pipelining is for --protocol resp (HTTP/1.1 sends one request at a time per connection)", load.ErrOptions, o.Pipeline)
	}
	u, err := url.Parse(o.URL)
	want := map[string]string{ProtocolRESP: "redis", ProtocolHTTPRaw: "http", ProtocolHTTPJSON: "http"}[o.Protocol]
	if want == "" {
		return nil, fmt.Errorf("%w: protocol %q (want resp, http-raw, http-json)", load.ErrOptions, o.Protocol)
	}
	if err != nil || u.Scheme != want || u.Port() == "" || (u.Path != "" && u.Path != "/") {
		return nil, fmt.Errorf("%w: URL %q: want %s://host:port for --protocol %s", load.ErrOptions, o.URL, want, o.Protocol)
	}
	s.addr = u.Host
	return s, nil
}

func (s *kvScenario) Ops() []string { return s.ops }

// Name is the scenario's name in results.
func (s *kvScenario) Name() string { return s.o.Name }

// Driver implements Scenario: pipelined RESP (-P > 1) runs in batches.
func (s *kvScenario) Driver() load.Driver {
	if s.o.Pipeline > 1 {
		return load.Batches
	}
	return load.PerVU
}

// Finish implements Scenario: a KV VU counts all its bytes itself.
func (s *kvScenario) Finish(*results.Load) {}

// Options are the effective options (defaults filled), for result files.
func (s *kvScenario) Options() KVOptions { return s.o }

// NewVU implements Scenario. kv-get and kv-mixed preload the key space
// before the first VU, over connections of their own whose bytes and
// requests are not counted.
func (s *kvScenario) NewVU(ctx context.Context, id int, wire *measure.Bytes) (load.VU, error) {
	if s.o.Name != ScenarioKVSet && !s.o.NoPreload {
		s.once.Do(func() { s.preloadErr = s.preload(ctx) })
		if s.preloadErr != nil {
			return nil, s.preloadErr
		}
	}
	v := kvVU{s: s, rng: rand.New(rand.NewPCG(uint64(id)+1, 0x6b76)), set: s.o.Name != ScenarioKVGet, get: s.o.Name != ScenarioKVSet}
	if s.o.Protocol == ProtocolRESP {
		return &respVU{kvVU: v, c: newRESPConn(s.addr, wire, s.o.Timeout)}, nil
	}
	return newHTTPKVVU(v, h1.NewConn(s.addr, wire, s.o.Timeout, true), s.o.Protocol == ProtocolHTTPJSON), nil
}

// kvVU is what every KV VU shares: the key choice and the value buffers.
type kvVU struct {
	s        *kvScenario
	rng      *rand.Rand
	set, get bool
	key      []byte
	val      []byte
}

// next picks the next operation and key: SET or GET (kv-mixed: half each)
// of a key drawn uniformly from the key space, as redis-benchmark -r.
func (v *kvVU) next() (op int, k int) {
	op = kvOpSet
	switch {
	case v.set && v.get:
		if v.rng.Uint64()&1 == 1 {
			op = kvOpGet
		}
	case v.get:
		op = kvOpGet
	}
	return op, v.rng.IntN(v.s.o.Keys)
}

// outcomeOp maps an op to Outcome.Op: kv-get has only GET, at index 0.
func (v *kvVU) outcomeOp(op int) int {
	if !v.set {
		return 0
	}
	return op
}

// appendKVKey appends key k as redis-benchmark names it: key:000000001234.
func appendKVKey(b []byte, k int) []byte {
	b = append(b, "key:"...)
	return appendKeyDigits(b, k)
}

func appendKeyDigits(b []byte, k int) []byte {
	var d [kvKeyDigits]byte
	for i := kvKeyDigits - 1; i >= 0; i-- {
		d[i] = byte('0' + k%10)
		k /= 10
	}
	return append(b, d[:]...)
}

// appendKVValue appends key k's value: its 12 digits and a '.', repeated
// and cut to size. Derived from the key, so a GET's reply is checked
// exactly (a value of another key, or of another size, differs), and
// JSON-safe, so the same value travels in a JSON string unescaped.
func appendKVValue(b []byte, k, size int) []byte {
	start := len(b)
	b = appendKeyDigits(b, k)
	b = append(b, '.')
	unit := kvKeyDigits + 1
	for len(b)-start < size {
		b = append(b, b[start:start+min(unit, size-(len(b)-start))]...)
	}
	return b[:start+size]
}

// kvCheckFail is the failure reason of a GET whose value is not its key's.
const kvCheckFail = "check: wrong value"

// kvMissingFail is the failure reason of a GET of a key that is absent.
const kvMissingFail = "check: key missing"

// kvURLPath is /kv/{key}; keys are [a-z0-9:] so need no escaping.
func kvURLPath(b []byte, k int) []byte {
	return appendKVKey(append(b, "/kv/"...), k)
}
