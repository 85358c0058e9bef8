package flags

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/wirebench/wirebench/load/keydist"
	"github.com/wirebench/wirebench/load/scenario"
)

// KV are the key-value scenarios' flags (kv-set, kv-get, kv-mixed). Names
// follow memtier_benchmark's where it has one; those given as text are
// read into Options by Read.
type KV struct {
	Options                scenario.KVOptions
	dist, pattern          string
	zipfExp, median, stdev float64
	sizeRange, sizeList    string
	ratio, expiry          string
}

// KVNames are the kv-* flags: a command refuses them with other scenarios.
var KVNames = []string{"protocol", "pipeline", "keys", "value-size", "no-preload",
	"key-dist", "key-pattern", "key-zipf-exp", "key-median", "key-stddev", "key-minimum", "key-maximum",
	"data-size-range", "data-size-list", "ratio", "expiry-range", "miss-ratio", "seed"}

// Register adds the kv-* flags to fs.
func (k *KV) Register(fs *pflag.FlagSet) {
	o := &k.Options
	fs.StringVar(&o.Protocol, "protocol", "", "kv-* `protocol`: resp (redis://host:port), http-raw or http-json (http://host:port, wirebench serve's /kv); default from the URL. --grpc METHOD: grpc (default), grpc-web or connect")
	fs.IntVarP(&o.Pipeline, "pipeline", "P", 1, "kv-* over resp: `P` commands written, then P replies read, per connection (redis-benchmark -P)")
	fs.IntVar(&o.Keys, "keys", scenario.DefaultKVKeys, "kv-*: key space `N`, keys key:000000000000.. (redis-benchmark -r)")
	fs.IntVar(&o.ValueSize, "value-size", scenario.DefaultKVValueSize, "kv-*: value size in `bytes` (redis-benchmark -d, memtier --data-size)")
	fs.BoolVar(&o.NoPreload, "no-preload", false, "kv-get, kv-mixed: the keys are already there (do not write them first); their values are still checked")
	fs.StringVar(&k.dist, "key-dist", "", "kv-*: key `distribution`: uniform (default), sequential, parallel, gaussian[:MEDIAN,STDDEV], zipf[:EXP] (e.g. zipf:0.99; exponent default 1)")
	fs.StringVar(&k.pattern, "key-pattern", "", "kv-*: memtier's key `pattern`: R (uniform), S (sequential), P (parallel: each VU its own slice, in order), G (Gaussian), Z (Zipf), or X:X (the same for SET and GET); as --key-dist")
	fs.Float64Var(&k.zipfExp, "key-zipf-exp", 0, "kv-* Zipf keys: the `exponent` s, 0 < s < 5 (memtier's; default 1; YCSB's zipfian is 0.99)")
	fs.Float64Var(&k.median, "key-median", 0, "kv-* Gaussian keys: the centre, a key `number` (default the middle of the key space)")
	fs.Float64Var(&k.stdev, "key-stddev", 0, "kv-* Gaussian keys: the standard deviation in `keys` (default a sixth of the key space)")
	fs.Int64Var(&o.KeyMin, "key-minimum", 0, "kv-*: the lowest key `number` (memtier's; with --key-maximum instead of --keys)")
	fs.Int64Var(&o.KeyMax, "key-maximum", 0, "kv-*: the highest key `number`, included (memtier's)")
	fs.StringVar(&k.sizeRange, "data-size-range", "", "kv-*: value sizes `MIN-MAX` bytes, each key's size fixed by --seed (memtier's)")
	fs.StringVar(&k.sizeList, "data-size-list", "", "kv-*: value sizes by weight, `SIZE:WEIGHT,...` (memtier's), each key's fixed by --seed")
	fs.StringVar(&k.ratio, "ratio", "", "kv-mixed: the mix `SET:GET[:DEL[:EXPIRE]]` by weight (memtier's SET:GET; default 1:1)")
	fs.StringVar(&k.expiry, "expiry-range", "", "kv-*: TTLs `MIN-MAX` (seconds, or durations: 100ms-2s) drawn for every SET and EXPIRE (memtier's)")
	fs.Float64Var(&o.MissRatio, "miss-ratio", 0, "kv-get, kv-mixed: the `share` of GETs asking for keys that never exist")
	fs.Uint64Var(&o.Seed, "seed", 1, "kv-*: `seed` of every draw (command, key, size, TTL): the same seed sends the same commands to any server")
}

// Read reads the text flags given on fs into Options (fs nil: none was
// given); a combination that cannot run is a UsageError naming the flags.
func (k *KV) Read(fs *pflag.FlagSet) error {
	if fs == nil {
		fs = pflag.NewFlagSet("", pflag.ContinueOnError)
	}
	switch o := &k.Options; {
	case fs.Changed("key-maximum") && o.KeyMax == 0:
		// KeyMax 0 means "not given" to the scenario: state key 0 alone
		// as one key from KeyMin, or refuse what contradicts it.
		switch {
		case o.KeyMin > 0:
			return Usagef("--key-maximum 0 below --key-minimum %d", o.KeyMin)
		case fs.Changed("keys") && o.Keys != 1:
			return Usagef("--keys %d and --key-minimum/--key-maximum 0..0 (1 key) disagree: give one", o.Keys)
		}
		o.Keys = 1
	case fs.Changed("key-maximum") && !fs.Changed("keys"):
		o.Keys = 0 // the range gives the key space
	}
	if err := k.read(fs, &k.Options); err != nil {
		return Usagef("%s", Message(err))
	}
	return nil
}

func (k *KV) read(fs *pflag.FlagSet, o *scenario.KVOptions) error {
	dist := k.dist
	if k.pattern != "" {
		if dist != "" {
			return fmt.Errorf("--key-dist and --key-pattern say the same: give one")
		}
		p, g, ok := strings.Cut(k.pattern, ":")
		if ok && len(p) == 1 && len(g) == 1 {
			if !strings.EqualFold(p, g) {
				return fmt.Errorf("--key-pattern %s: one pattern for SET and GET (%s:%s)", k.pattern, p, p)
			}
			dist = p
		} else {
			dist = k.pattern
		}
	}
	if dist != "" {
		sp, err := keydist.Parse(dist)
		if err != nil {
			return err
		}
		o.KeyDist = sp
	}
	if fs.Changed("key-zipf-exp") {
		if o.KeyDist.Pattern != keydist.Zipf {
			return fmt.Errorf("--key-zipf-exp applies to Zipf keys (--key-dist zipf)")
		}
		if !(k.zipfExp > 0) {
			return fmt.Errorf("--key-zipf-exp %g: want 0 < s < %g", k.zipfExp, keydist.MaxZipfExp)
		}
		o.KeyDist.Exp = k.zipfExp
	}
	if fs.Changed("key-median") || fs.Changed("key-stddev") {
		if o.KeyDist.Pattern != keydist.Gaussian {
			return fmt.Errorf("--key-median and --key-stddev apply to Gaussian keys (--key-dist gaussian)")
		}
		if fs.Changed("key-median") {
			m := k.median
			o.KeyDist.Median = &m
		}
		if fs.Changed("key-stddev") {
			if !(k.stdev > 0) {
				return fmt.Errorf("--key-stddev %g: want > 0", k.stdev)
			}
			o.KeyDist.Stddev = k.stdev
		}
	}
	var err error
	switch {
	case k.sizeRange != "" && k.sizeList != "":
		return fmt.Errorf("--data-size-range and --data-size-list: give one")
	case k.sizeRange != "":
		o.Sizes, err = keydist.ParseRange(k.sizeRange)
	case k.sizeList != "":
		o.Sizes, err = keydist.ParseList(k.sizeList)
	}
	if err != nil {
		return err
	}
	if (k.sizeRange != "" || k.sizeList != "") && fs.Changed("value-size") {
		return fmt.Errorf("--value-size and --data-size-range/--data-size-list: give one")
	}
	if k.ratio != "" {
		if o.Ratio, err = scenario.ParseRatio(k.ratio); err != nil {
			return err
		}
	}
	if k.expiry != "" {
		if o.ExpiryMin, o.ExpiryMax, err = scenario.ParseExpiryRange(k.expiry); err != nil {
			return err
		}
	}
	return nil
}
