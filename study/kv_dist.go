package study

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/keydist"
	"github.com/wirebench/wirebench/load/scenario"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
	"github.com/wirebench/wirebench/results/stats"
)

// ErrNoKVCells refuses key distributions for a study without KV cells.
var ErrNoKVCells = errors.New("study: --key-dist: no key-value cells")

// WithKeyDists adds, beside each group of key-value cells, the same
// group under each of dists (study kv --key-dist zipf:0.99): the same
// servers and client, the keys drawn from that distribution, so a hot
// key's cost on one lock or shard shows beside the uniform load. The
// twins skip redis-benchmark's cross-check, whose keys are uniform only.
// Cells whose keys are already skewed (a study file's) and the
// replication cells keep one copy.
//
// pipelines are the depths of the twins (none: 1 only): 1 is the cell's
// own; a deeper one adds, after them, the RESP cells' twins pipelined
// that deep (RESP pipelines, HTTP does not), so one run holds a skewed
// load pipelined and not against both servers.
func WithKeyDists(def Definition, dists []keydist.Spec, pipelines ...int) (Definition, error) {
	if len(dists) == 0 {
		return def, nil
	}
	if len(pipelines) == 0 {
		pipelines = []int{1}
	}
	for _, p := range pipelines {
		if p < 1 || p > kvMaxPipeline {
			return def, fmt.Errorf("%w: pipeline %d: want 1..%d", ErrDefinition, p, kvMaxPipeline)
		}
	}
	var cells, pending []Cell
	added := 0
	flush := func() {
		for _, d := range dists {
			for _, p := range pipelines {
				for _, c := range pending {
					if tw, ok := kvTwin(c, d, p); ok {
						cells = append(cells, tw)
						added++
					}
				}
			}
		}
		pending = nil
	}
	for i, c := range def.Cells {
		if i > 0 && c.Group != def.Cells[i-1].Group {
			flush()
		}
		cells = append(cells, c)
		if k := c.Load.KV; k != nil && c.Group != kvReplGroup && (k.KeyDist.Pattern == "" || k.KeyDist.Pattern == keydist.Uniform) {
			pending = append(pending, c)
		}
	}
	flush()
	if added == 0 {
		return def, fmt.Errorf("%w in study %s", ErrNoKVCells, def.Name)
	}
	def.Cells = cells
	names := make([]string, len(dists))
	for i, d := range dists {
		names[i] = d.String()
	}
	def.Description += " With --key-dist, each KV group has twins with keys drawn " + strings.Join(names, ", ") +
		" (the same seed for every server: each receives the same commands in the same order); " +
		"GET and SET split into hot keys (the 1% the distribution makes likeliest) and cold ones."
	if deep := slices.DeleteFunc(slices.Clone(pipelines), func(p int) bool { return p == 1 }); len(deep) > 0 {
		def.Description += fmt.Sprintf(" The RESP cells' twins run pipelined too (-P %s), Redis and ours alike.", kvJoinInts(deep))
	}
	return def, nil
}

// kvMaxPipeline is the client's bound on -P (load/scenario's), checked
// before any trial runs.
const kvMaxPipeline = 4096

// kvTwin is c with its keys drawn from d, pipelined p deep when p > 1
// (RESP cells not already pipelined only: false for the others).
func kvTwin(c Cell, d keydist.Spec, p int) (Cell, bool) {
	tw := c
	k := *c.Load.KV
	k.KeyDist = d
	tw.Group = c.Group + ", " + d.String()
	if p > 1 {
		if k.Protocol != scenario.ProtocolRESP || k.Pipeline > 1 {
			return Cell{}, false
		}
		k.Pipeline = p
		tw.Group += fmt.Sprintf(", -P %d", p)
	}
	tw.Load.KV = &k
	tw.Checks = slices.DeleteFunc(slices.Clone(c.Checks), func(ch Check) bool { return strings.HasPrefix(ch.Name, "redis-benchmark") })
	return tw, true
}

func kvJoinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// kvSkewNotes is the table of the skewed cells (WithKeyDists, or a study
// file's KV loads with skewed keys): per cell, the share of its commands
// that went to the hot keys as measured against the distribution's, the
// GETs' hit ratio, and its hot and cold keys' p99 with the difference
// between them — a hot key contending on one lock or shard shows there.
// "" when no cell had skewed keys.
func kvSkewNotes(res *results.Study) string {
	var b strings.Builder
	for _, c := range res.Cells {
		var share, want, hits, hotP99, coldP99 []float64
		dist := ""
		for _, t := range res.TrialsOf(c.ID) {
			k := t.Load.KV
			if k == nil || k.HotKeys == 0 {
				continue
			}
			dist = k.KeyDist
			share, want = append(share, k.HotShare()), append(want, k.ExpectedHotShare)
			if hr, ok := k.HitRatio(); ok {
				hits = append(hits, hr)
			}
			// The command of the cell's group (SET, GET), or every command.
			var hot, cold []results.Op
			for _, o := range t.Load.Ops {
				switch {
				case strings.HasSuffix(o.Name, " hot"):
					hot = append(hot, o)
				case strings.HasSuffix(o.Name, " cold"):
					cold = append(cold, o)
				}
			}
			if h, ok := kvP99(hot); ok {
				hotP99 = append(hotP99, h)
			}
			if c, ok := kvP99(cold); ok {
				coldP99 = append(coldP99, c)
			}
		}
		if len(share) == 0 {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("## Skewed keys: the hot keys' share and latency\n\n" +
				"Hot keys are the 1% of the key space the distribution makes likeliest (for Zipf the lowest-numbered keys, for a Gaussian those nearest its centre). " +
				"Share: of the commands each trial sent, those on hot keys, against the distribution's expected share. " +
				"p99 hot and cold: each trial's p99 of the commands on hot and on the other keys; \"hot vs cold\" compares the trials' hot p99s with their cold p99s " +
				"(Mann-Whitney U test; ~ when not significant, ? when too few trials to decide). " +
				"Pipelined cells (-P N) have none: every command of a batch gets the batch's latency, so their hot and cold keys' latencies cannot differ by the key.\n\n" +
				"| Group | Cell | keys | hot share (expected) | GET hits | p99 hot | p99 cold | hot vs cold |\n|---|---|---|---:|---:|---:|---:|---:|\n")
		}
		vs := "–"
		if len(hotP99) > 0 && len(coldP99) > 0 {
			vs = stats.Compare(coldP99, hotP99).String()
		}
		if p := c.Load.Pipeline; p > 1 {
			hotP99, coldP99, vs = nil, nil, fmt.Sprintf("not by key: -P %d", p)
		}
		hit := "–"
		if len(hits) > 0 {
			hit = fmt.Sprintf("%.2f%%", 100*stats.Summarize(hits).Center)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %.2f%% (%.2f%%) | %s | %s | %s | %s |\n", c.Group, c.Label, dist,
			100*stats.Summarize(share).Center, 100*stats.Summarize(want).Center, hit, kvLatency(hotP99), kvLatency(coldP99), vs)
	}
	return b.String()
}

// kvP99 is the p99 of ops' latencies merged.
func kvP99(ops []results.Op) (float64, bool) {
	h := measure.NewHistogram()
	for _, o := range ops {
		if o.Latency != nil {
			h.Merge(o.Latency)
		}
	}
	if h.Count() == 0 {
		return 0, false
	}
	return float64(h.Quantile(0.99)), true
}

// kvDescribe adds to a KV cell's recorded client what differs from the
// seed's uniform load.
func kvDescribe(d *results.CellLoad, k *scenario.KVOptions) {
	if k.KeyDist.Pattern != "" && k.KeyDist.Pattern != keydist.Uniform {
		d.KeyDist = k.KeyDist.String()
	}
	if k.Sizes.Max > 0 || len(k.Sizes.List) > 0 {
		d.ValueSizes = k.Sizes.String()
	}
	if k.Ratio != (scenario.Ratio{}) {
		d.Ratio = k.Ratio.String()
	}
	if k.ExpiryMax > 0 {
		d.ExpiryRange = k.ExpiryMin.String() + "-" + k.ExpiryMax.String()
	}
	d.MissRatio = k.MissRatio
	if k.Seed > 1 {
		d.Seed = k.Seed
	}
	d.KeyMinimum = k.KeyMin
}

// kvLoad is a study file's kv-* load, each of its errors reported at its
// line (the scenario itself is built and checked by the caller).
func (p *parser) kvLoad(ls *loadSpec, path string, line func(string) int) *scenario.KVOptions {
	k := &scenario.KVOptions{Name: ls.Scenario, Protocol: ls.Protocol, URL: ls.URL, Keys: ls.Keys, KeyMin: ls.KeyMinimum, KeyMax: ls.KeyMaximum,
		ValueSize: ls.ValueSize, MissRatio: ls.MissRatio, Seed: uint64(max(ls.KVSeed, 0)), Pipeline: ls.Pipeline, Timeout: ls.Timeout, NoPreload: ls.NoPreload}
	if k.Protocol == "" && !strings.HasPrefix(ls.URL, "redis://") {
		k.Protocol = scenario.ProtocolHTTPRaw
	}
	if ls.KVSeed < 0 {
		p.errorf(line("seed"), "%s.seed: %d is negative", path, ls.KVSeed)
	}
	var err error
	if ls.KeyDist != "" {
		if k.KeyDist, err = keydist.Parse(ls.KeyDist); err != nil {
			p.errorf(line("key_dist"), "%s.key_dist: %s", path, strings.TrimPrefix(err.Error(), keydist.ErrSpec.Error()+": "))
		}
	}
	switch {
	case ls.DataSizeRange != "" && ls.DataSizeList != "":
		p.errorf(line("data_size_list"), "%s: data_size_range and data_size_list exclude each other", path)
	case ls.DataSizeRange != "":
		if k.Sizes, err = keydist.ParseRange(ls.DataSizeRange); err != nil {
			p.errorf(line("data_size_range"), "%s.data_size_range: %s", path, strings.TrimPrefix(err.Error(), keydist.ErrSpec.Error()+": "))
		}
	case ls.DataSizeList != "":
		if k.Sizes, err = keydist.ParseList(ls.DataSizeList); err != nil {
			p.errorf(line("data_size_list"), "%s.data_size_list: %s", path, strings.TrimPrefix(err.Error(), keydist.ErrSpec.Error()+": "))
		}
	}
	if ls.Ratio != "" {
		if k.Ratio, err = scenario.ParseRatio(ls.Ratio); err != nil {
			p.errorf(line("ratio"), "%s.ratio: %s", path, strings.TrimPrefix(err.Error(), load.ErrOptions.Error()+": "))
		}
	}
	if ls.ExpiryRange != "" {
		if k.ExpiryMin, k.ExpiryMax, err = scenario.ParseExpiryRange(ls.ExpiryRange); err != nil {
			p.errorf(line("expiry_range"), "%s.expiry_range: %s", path, strings.TrimPrefix(err.Error(), load.ErrOptions.Error()+": "))
		}
	}
	return k
}

// kvBenchBoth sets the two clients' ratios of our store to Redis side by
// side: where redis-benchmark measured both servers (the RESP cells), a
// client that favours one server shows as a ratio of its own that
// differs from the other client's.
func kvBenchBoth(st []kvCellStats) string {
	var b strings.Builder
	for _, op := range []string{"SET", "GET"} {
		for _, p := range kvPersistences {
			r, w := kvFind(st, op, p.title, "Redis"), kvFind(st, op, p.title, "wirebench RESP")
			if len(r.benchRPS) == 0 || len(w.benchRPS) == 0 {
				continue
			}
			if b.Len() == 0 {
				b.WriteString("\n### Ours against Redis, by each client\n\n" +
					"redis-benchmark run after our load in the Redis and the wirebench RESP trials (uniform keys, the seed's settings): " +
					"the ratio of our store to Redis by each client. Two clients that agree say neither favours a server.\n\n" +
					"| Operation | Persistence | wirebench client: ours / Redis | redis-benchmark: ours / Redis |\n|---|---|---:|---:|\n")
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", op, p.title, kvRatioOf(w.rps, r.rps), kvRatioOf(w.benchRPS, r.benchRPS))
		}
	}
	return b.String()
}
