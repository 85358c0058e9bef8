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
	"github.com/wirebench/wirebench/load/keydist"
	"github.com/wirebench/wirebench/measure"
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
	// KeyMin and KeyMax give the key space as memtier_benchmark does
	// (--key-minimum, --key-maximum, both included) instead of Keys: with
	// KeyMax 0 the keys are KeyMin .. KeyMin+Keys-1.
	KeyMin int64 `json:"key_minimum,omitempty"`
	KeyMax int64 `json:"key_maximum,omitempty"`
	// KeyDist is how keys are drawn: uniform (the zero value, as
	// redis-benchmark), sequential, Gaussian or Zipf (load/keydist).
	KeyDist keydist.Spec `json:"key_dist"`
	// ValueSize is the value length in bytes (redis-benchmark -d).
	// Default 128. Sizes, if set, replace it: a range or a weighted list,
	// each key's size fixed by the seed (keydist.Sizes).
	ValueSize int           `json:"value_size"`
	Sizes     keydist.Sizes `json:"sizes,omitempty"`
	// Ratio is kv-mixed's mix of SET, GET, DEL and EXPIRE (memtier's
	// --ratio is SET:GET); kv-mixed's default is 1:1, kv-set's 1:0,
	// kv-get's 0:1.
	Ratio Ratio `json:"ratio,omitempty"`
	// ExpiryMin and ExpiryMax, if set, give every SET a TTL drawn
	// uniformly between them (memtier's --expiry-range), and every EXPIRE
	// its TTL. Keys then expire during the run: a GET that misses is
	// counted, not failed.
	ExpiryMin time.Duration `json:"expiry_min,omitempty"`
	ExpiryMax time.Duration `json:"expiry_max,omitempty"`
	// MissRatio is the share of GETs asking for keys that never exist
	// (nokey:…, drawn from the same distribution): the hit ratio asked for.
	MissRatio float64 `json:"miss_ratio,omitempty"`
	// Seed seeds every draw (operation, key, size, TTL): with the same
	// seed, each VU sends the same commands in the same order to any
	// server. Default 1.
	Seed uint64 `json:"seed,omitempty"`
	// Pipeline is the depth (redis-benchmark -P): each VU writes this many
	// commands, then reads as many replies. RESP only; default 1.
	Pipeline int           `json:"pipeline"`
	Timeout  time.Duration `json:"timeout"`
	// NoPreload skips the preload of kv-get and kv-mixed: the key space
	// is already there (written by an earlier run, perhaps over another
	// protocol, whose values this run then checks).
	NoPreload bool `json:"no_preload,omitempty"`
	// Workers is the number of VUs the parallel key pattern slices the key
	// space by (each VU walks its own slice, memtier's P); other patterns
	// ignore it.
	Workers int `json:"workers,omitempty"`
}

// kvScenario is the Scenario of the KV workloads.
type kvScenario struct {
	o     KVOptions
	addr  string
	dist  *keydist.Dist
	mix   kvMix
	sizes keydist.Sizes
	// missOK: a GET may find no key without the server being at fault
	// (keys deleted, expiring, or asked for absent).
	missOK bool

	once       sync.Once
	preloadErr error

	mu     sync.Mutex
	counts []*kvCounts // one per VU, summed by Finish
}

// KV is a key-value scenario (NewKV): a load.Scenario whose Options are
// the ones it runs with, defaults filled in.
type KV = kvScenario

// NewKV validates o; connections are made lazily (the preload of kv-get
// and kv-mixed at the first VU).
func NewKV(o KVOptions) (*KV, error) {
	if o.Protocol == "" {
		o.Protocol = ProtocolRESP
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
	if o.Seed == 0 {
		o.Seed = 1
	}
	if err := o.keySpace(); err != nil {
		return nil, err
	}
	s := &kvScenario{o: o}
	var def Ratio
	switch o.Name {
	case ScenarioKVSet:
		def = Ratio{Set: 1}
	case ScenarioKVGet:
		def = Ratio{Get: 1}
	case ScenarioKVMixed:
		def = Ratio{Set: 1, Get: 1}
	default:
		return nil, fmt.Errorf("%w: scenario %q (want kv-set, kv-get, kv-mixed)", load.ErrOptions, o.Name)
	}
	s.o.Ratio = o.Ratio.or(def)
	if o.Name != ScenarioKVMixed {
		// kv-set's and kv-get's ratio can only restate their one command.
		got, want := newKVMix(s.o.Ratio, false).kinds, newKVMix(def, false).kinds[0]
		if len(got) != 1 || got[0] != want {
			return nil, fmt.Errorf("%w: --ratio %s: %s sends only %s; use --scenario kv-mixed for a mix", load.ErrOptions, o.Ratio, o.Name, kvOpNames[want])
		}
	}
	s.sizes = o.Sizes
	if s.sizes.Max == 0 && len(s.sizes.List) == 0 {
		s.sizes = keydist.Sizes{Fixed: o.ValueSize}
	}
	lo, hi := s.sizes.Bounds()
	switch {
	case o.Keys < 1:
		return nil, fmt.Errorf("%w: --keys %d: want at least 1", load.ErrOptions, o.Keys)
	case (lo < 1 || hi > maxKVValueSize) && s.sizes.Fixed != 0:
		return nil, fmt.Errorf("%w: --value-size %d: want 1..%d bytes", load.ErrOptions, lo, maxKVValueSize)
	case lo < 1 || hi > maxKVValueSize:
		return nil, fmt.Errorf("%w: value sizes %s: want 1..%d bytes", load.ErrOptions, s.sizes, maxKVValueSize)
	case o.Pipeline < 1 || o.Pipeline > maxKVPipeline:
		return nil, fmt.Errorf("%w: -P %d: want 1..%d", load.ErrOptions, o.Pipeline, maxKVPipeline)
	case o.Pipeline > 1 && o.Protocol != ProtocolRESP:
		return nil, fmt.Errorf("%w: -P %d: pipelining is for --protocol resp (HTTP/1.1 sends one request at a time per connection)", load.ErrOptions, o.Pipeline)
	case o.ExpiryMin < 0 || o.ExpiryMax < o.ExpiryMin || (o.ExpiryMin > 0 && o.ExpiryMin < time.Millisecond):
		return nil, fmt.Errorf("%w: expiry range %v-%v: want 1ms ≤ min ≤ max", load.ErrOptions, o.ExpiryMin, o.ExpiryMax)
	case s.o.Ratio.Expire > 0 && o.ExpiryMax == 0:
		return nil, fmt.Errorf("%w: --ratio %s sends EXPIRE: give its TTLs with --expiry-range", load.ErrOptions, s.o.Ratio)
	case !(o.MissRatio >= 0 && o.MissRatio <= 1):
		return nil, fmt.Errorf("%w: --miss-ratio %g: want 0..1", load.ErrOptions, o.MissRatio)
	case o.MissRatio > 0 && s.o.Ratio.Get == 0:
		return nil, fmt.Errorf("%w: --miss-ratio %g: the load sends no GET", load.ErrOptions, o.MissRatio)
	}
	var err error
	if s.dist, err = keydist.New(o.KeyDist, s.o.KeyMin, s.o.KeyMax); err != nil {
		return nil, fmt.Errorf("%w: %v", load.ErrOptions, err)
	}
	s.o.KeyDist = s.dist.Spec()
	if s.o.KeyDist.Pattern == keydist.Parallel {
		// Check the slicing now, not at the first VU.
		if _, err := s.dist.WorkerSource(s.o.Seed, 0, max(s.o.Workers, 0)); err != nil {
			return nil, fmt.Errorf("%w: %v (parallel keys are sliced by the number of VUs, -c)", load.ErrOptions, err)
		}
	}
	s.mix = newKVMix(s.o.Ratio, s.dist.HotKeys() > 0)
	s.missOK = s.o.Ratio.Del > 0 || s.o.Ratio.Expire > 0 || o.ExpiryMax > 0 || o.MissRatio > 0
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

// keySpace fills Keys, KeyMin and KeyMax from one another: Keys alone is
// 0..Keys-1 (redis-benchmark -r), KeyMin and KeyMax memtier's range.
func (o *KVOptions) keySpace() error {
	const maxKey = 999_999_999_999 // 12 digits
	switch {
	case o.KeyMin < 0 || o.KeyMax < 0 || o.KeyMax > maxKey || o.KeyMin > maxKey:
		return fmt.Errorf("%w: key range %d..%d: keys are 0..%d (12 digits)", load.ErrOptions, o.KeyMin, o.KeyMax, int64(maxKey))
	case o.KeyMax > 0 && o.KeyMax < o.KeyMin:
		return fmt.Errorf("%w: --key-maximum %d below --key-minimum %d", load.ErrOptions, o.KeyMax, o.KeyMin)
	case o.KeyMax > 0:
		n := o.KeyMax - o.KeyMin + 1
		if o.Keys != 0 && int64(o.Keys) != n {
			return fmt.Errorf("%w: --keys %d and --key-minimum/--key-maximum %d..%d (%d keys) disagree: give one", load.ErrOptions, o.Keys, o.KeyMin, o.KeyMax, n)
		}
		o.Keys = int(n)
	default:
		if o.Keys == 0 {
			o.Keys = DefaultKVKeys
		}
		if o.Keys < 1 {
			return fmt.Errorf("%w: --keys %d: want at least 1", load.ErrOptions, o.Keys)
		}
		if int64(o.Keys) > maxKey || o.KeyMin+int64(o.Keys)-1 > maxKey {
			return fmt.Errorf("%w: --keys %d from %d: keys are 0..%d (12 digits)", load.ErrOptions, o.Keys, o.KeyMin, int64(maxKey))
		}
		o.KeyMax = o.KeyMin + int64(o.Keys) - 1
	}
	return nil
}

func (s *kvScenario) Ops() []string { return s.mix.names }

// Name is the scenario's name in results.
func (s *kvScenario) Name() string { return s.o.Name }

// Driver implements Scenario: pipelined RESP (-P > 1) runs in batches.
func (s *kvScenario) Driver() load.Driver {
	if s.o.Pipeline > 1 {
		return load.Batches
	}
	return load.PerVU
}

// Options are the effective options (defaults filled), for result files.
func (s *kvScenario) Options() KVOptions { return s.o }

// NewVU implements Scenario. kv-get and kv-mixed preload the key space
// before the first VU, over connections of their own whose bytes and
// requests are not counted.
func (s *kvScenario) NewVU(ctx context.Context, id int, wire *measure.Bytes) (load.VU, error) {
	if s.o.Ratio.Get+s.o.Ratio.Del+s.o.Ratio.Expire > 0 && !s.o.NoPreload {
		s.once.Do(func() { s.preloadErr = s.preload(ctx) })
		if s.preloadErr != nil {
			return nil, s.preloadErr
		}
	}
	v, err := s.newKVVU(id)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.counts = append(s.counts, v.counts)
	s.mu.Unlock()
	if s.o.Protocol == ProtocolRESP {
		return &respVU{kvVU: v, c: newRESPConn(s.addr, wire, s.o.Timeout)}, nil
	}
	return newHTTPKVVU(v, h1.NewConn(s.addr, wire, s.o.Timeout, true), s.o.Protocol == ProtocolHTTPJSON), nil
}

// newKVVU is VU id's draws: its own stream of the seed, and with parallel
// keys its own slice of the key space.
func (s *kvScenario) newKVVU(id int) (kvVU, error) {
	v := kvVU{s: s, src: s.dist.Source(s.o.Seed, uint64(id)), counts: new(kvCounts)}
	if s.o.KeyDist.Pattern == keydist.Parallel {
		// VUs past Workers (open loop may start more) share slices.
		var err error
		if v.src, err = s.dist.WorkerSource(s.o.Seed, id%s.o.Workers, s.o.Workers); err != nil {
			return kvVU{}, err
		}
	}
	v.rng = v.src.Rand()
	return v, nil
}

// kvVU is what every KV VU shares: the draws and the value buffers.
type kvVU struct {
	s      *kvScenario
	src    *keydist.Source
	rng    *rand.Rand // src's
	counts *kvCounts
	key    []byte
	val    []byte
}

// kvDraw is one operation as drawn: what, on which key, with which TTL.
type kvDraw struct {
	op   int   // kvOpSet, kvOpGet, kvOpDel, kvOpExpire
	key  int64 // the key's number
	out  int   // Outcome.Op
	miss bool  // a GET of nokey:…, absent by design
	ttl  int64 // ms: a SET's TTL (0: none), an EXPIRE's
}

// next draws the next operation: the command by the ratio, then the key
// from the distribution, then a GET's miss and a TTL — always in this
// order, from the VU's one seeded source, so the same seed sends the same
// commands whatever the server answers.
func (v *kvVU) next() kvDraw {
	s := v.s
	d := kvDraw{op: s.mix.pick(v.rng)}
	d.key = v.src.Key()
	if d.op == kvOpGet && s.o.MissRatio > 0 {
		d.miss = v.rng.Float64() < s.o.MissRatio
	}
	if (d.op == kvOpSet || d.op == kvOpExpire) && s.o.ExpiryMax > 0 {
		lo, hi := s.o.ExpiryMin.Milliseconds(), s.o.ExpiryMax.Milliseconds()
		d.ttl = lo + v.rng.Int64N(hi-lo+1)
	}
	// A GET of nokey:… asks for no hot key, whatever its number.
	hot := s.dist.Hot(d.key) && !d.miss
	d.out = s.mix.out(d.op, hot)
	v.counts.requests++
	if hot {
		v.counts.hot++
	}
	if d.miss {
		v.counts.absent++
	}
	return d
}

// appendKey appends d's key: key:…, or nokey:… for a GET meant to miss.
func (v *kvVU) appendKey(b []byte, d kvDraw) []byte {
	if d.miss {
		return appendKeyDigits(append(b, "nokey:"...), d.key)
	}
	return appendKVKey(b, d.key)
}

// valueSize is key k's value size.
func (s *kvScenario) valueSize(k int64) int { return s.sizes.Of(s.o.Seed, k) }

// appendKVKey appends key k as redis-benchmark names it: key:000000001234.
func appendKVKey(b []byte, k int64) []byte {
	b = append(b, "key:"...)
	return appendKeyDigits(b, k)
}

func appendKeyDigits(b []byte, k int64) []byte {
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
func appendKVValue(b []byte, k int64, size int) []byte {
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
func kvURLPath(b []byte, v *kvVU, d kvDraw) []byte {
	return v.appendKey(append(b, "/kv/"...), d)
}
