package study

import (
	"context"
	"errors"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/load/keydist"
	"github.com/wirebench/wirebench/load/scenario"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// TestWithKeyDists: each KV group gets a twin per distribution right
// after it, same servers and client, the keys skewed, without
// redis-benchmark's uniform cross-check; the replication cells and
// studies without KV cells are left alone.
func TestWithKeyDists(t *testing.T) {
	def, _ := Lookup("kv")
	zipf, gauss := keydist.Spec{Pattern: keydist.Zipf, Exp: 0.99}, keydist.Spec{Pattern: keydist.Gaussian}
	got, err := WithKeyDists(def, []keydist.Spec{zipf, gauss})
	if err != nil {
		t.Fatal(err)
	}
	kvCells := 0
	for _, c := range def.Cells {
		if c.Load.KV != nil && c.Group != kvReplGroup {
			kvCells++
		}
	}
	if len(got.Cells) != len(def.Cells)+2*kvCells || kvCells == 0 {
		t.Fatalf("%d cells, want %d + 2 × %d", len(got.Cells), len(def.Cells), kvCells)
	}
	var groups []string
	for _, c := range got.Cells {
		if len(groups) == 0 || groups[len(groups)-1] != c.Group {
			groups = append(groups, c.Group)
		}
		twin := strings.HasSuffix(c.Group, ", zipf:0.99") || strings.HasSuffix(c.Group, ", gaussian")
		if !twin {
			continue
		}
		if d := c.Load.KV.KeyDist.String(); !strings.HasSuffix(c.Group, d) {
			t.Errorf("%s/%s: keys %s", c.Group, c.Label, d)
		}
		for _, ch := range c.Checks {
			if strings.HasPrefix(ch.Name, "redis-benchmark") {
				t.Errorf("%s/%s keeps %s", c.Group, c.Label, ch.Name)
			}
		}
	}
	if groups[0] != "SET, no persistence" || groups[1] != "SET, no persistence, zipf:0.99" || groups[2] != "SET, no persistence, gaussian" {
		t.Errorf("groups %v: each twin right after its group", groups[:3])
	}
	for _, c := range def.Cells { // the original is untouched
		if c.Load.KV != nil && c.Load.KV.KeyDist.Pattern != "" {
			t.Fatalf("WithKeyDists changed the study it was given: %s/%s", c.Group, c.Label)
		}
	}
	formats, _ := Lookup("formats")
	if _, err := WithKeyDists(formats, []keydist.Spec{zipf}); !errors.Is(err, ErrNoKVCells) {
		t.Errorf("formats: %v, want ErrNoKVCells", err)
	}
}

// TestKVSkewNotes: the skewed cells' table gives the measured hot share
// beside the expected, the hit ratio and the hot and cold p99s.
func TestKVSkewNotes(t *testing.T) {
	lat := func(d time.Duration, n int) *measure.Histogram {
		h := measure.NewHistogram()
		for range n {
			h.Record(d)
		}
		return h
	}
	res := &results.Study{Cells: []results.Cell{{ID: "GET, no persistence, zipf:0.99/Redis", Group: "GET, no persistence, zipf:0.99", Label: "Redis"},
		{ID: "GET, no persistence/Redis", Group: "GET, no persistence", Label: "Redis"}}}
	for i := range 6 {
		res.Trials = append(res.Trials, results.Trial{Cell: res.Cells[0].ID, Load: &results.Load{
			KV:  &results.KV{KeyDist: "zipf:0.99", Keys: 10000, HotKeys: 100, ExpectedHotShare: 0.52, Requests: 1000, HotRequests: 515 + int64(i), Gets: 1000, Hits: 990, Misses: 10},
			Ops: []results.Op{{Name: "GET cold", Latency: lat(time.Millisecond, 100)}, {Name: "GET hot", Latency: lat(time.Duration(3+i)*time.Millisecond, 100)}}}})
		res.Trials = append(res.Trials, results.Trial{Cell: res.Cells[1].ID, Load: &results.Load{KV: &results.KV{KeyDist: "uniform", Keys: 10000}}})
	}
	n := kvSkewNotes(res)
	for _, want := range []string{"## Skewed keys", "| GET, no persistence, zipf:0.99 | Redis | zipf:0.99 | 51.75% (52.00%) | 99.00% |", "+"} {
		if !strings.Contains(n, want) {
			t.Errorf("notes lack %q:\n%s", want, n)
		}
	}
	if strings.Contains(n, "| GET, no persistence | Redis") {
		t.Errorf("a uniform cell in the skew table:\n%s", n)
	}
	if kvSkewNotes(&results.Study{}) != "" {
		t.Errorf("a table without skewed cells")
	}
}

// TestKVSkewNotesPipelined: a pipelined cell's commands share their
// batch's latency, so its hot and cold keys' p99s cannot differ by the
// keys: the table says so instead of comparing them.
func TestKVSkewNotesPipelined(t *testing.T) {
	lat := func(d time.Duration) *measure.Histogram {
		h := measure.NewHistogram()
		for range 100 {
			h.Record(d)
		}
		return h
	}
	c := results.Cell{ID: "GET, zipf:0.99, -P 16/Redis", Group: "GET, zipf:0.99, -P 16", Label: "Redis", Load: results.CellLoad{Pipeline: 16}}
	res := &results.Study{Cells: []results.Cell{c}}
	for range 6 {
		res.Trials = append(res.Trials, results.Trial{Cell: c.ID, Load: &results.Load{
			KV:  &results.KV{KeyDist: "zipf:0.99", Keys: 10000, HotKeys: 100, ExpectedHotShare: 0.52, Requests: 1000, HotRequests: 520, Gets: 1000, Hits: 1000},
			Ops: []results.Op{{Name: "GET cold", Latency: lat(time.Millisecond)}, {Name: "GET hot", Latency: lat(3 * time.Millisecond)}}}})
	}
	n := kvSkewNotes(res)
	if !strings.Contains(n, "| GET, zipf:0.99, -P 16 | Redis | zipf:0.99 | 52.00% (52.00%) | 100.00% | – | – | not by key: -P 16 |") {
		t.Errorf("a pipelined cell's hot and cold p99s compared:\n%s", n)
	}
}

// TestPeerKVStudyKeyDist runs study kv's GET cells without persistence,
// Redis and wirebench RESP, with their Zipf 0.99 twins, one short trial
// each: the twins' hot keys take the distribution's share within 2
// points, every GET hits, and the report's notes have the skew table.
func TestPeerKVStudyKeyDist(t *testing.T) {
	testkit.NeedPeers(t) // a study run: CI's peer step (docs/testing.md)
	testkit.NeedTool(t, "redis-server", "apt-get install -y redis-server")
	bin := testkit.Binary(t)
	def, _ := Lookup("kv")
	var cells []Cell
	for _, c := range def.Cells {
		if c.Group == "GET, no persistence" {
			c.Checks = nil // redis-benchmark: TestKVStudyQuickRedis
			cells = append(cells, c)
		}
	}
	def.Cells = cells
	def, err := WithKeyDists(def, []keydist.Spec{{Pattern: keydist.Zipf, Exp: 0.99}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Run(ctx, def, Options{Quick: true, Trials: 1, Warmup: 100 * time.Millisecond, Duration: 500 * time.Millisecond, Seed: 3, Binary: bin, Ports: testPorts(),
		Progress: func(s string) { t.Log(s) }})
	if err != nil {
		t.Fatal(err)
	}
	twins := 0
	for _, tr := range res.Trials {
		if tr.Error != "" || tr.Load.Failed != 0 || tr.Load.KV == nil {
			t.Fatalf("%s: %s; failed %d %v", tr.Cell, tr.Error, tr.Load.Failed, tr.Load.Failures)
		}
		k := tr.Load.KV
		if hr, _ := k.HitRatio(); hr != 1 {
			t.Errorf("%s: hit ratio %v", tr.Cell, hr)
		}
		if !strings.Contains(tr.Cell, "zipf") {
			continue
		}
		twins++
		t.Logf("%s: hot share %.4f, expected %.4f, %d GETs", tr.Cell, k.HotShare(), k.ExpectedHotShare, k.Gets)
		if math.Abs(k.HotShare()-k.ExpectedHotShare) > 0.02 {
			t.Errorf("%s: hot share %.4f, expected %.4f", tr.Cell, k.HotShare(), k.ExpectedHotShare)
		}
	}
	if twins != 2 {
		t.Errorf("%d zipf trials, want 2", twins)
	}
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "## Skewed keys") || !strings.Contains(res.Notes[0], "| GET, no persistence, zipf:0.99 | wirebench RESP | zipf:0.99 |") {
		t.Errorf("notes:\n%s", strings.Join(res.Notes, "\n"))
	}
}

// TestParseKVLoad: a study file's kv-* load, with the key-value keys
// named as wirebench load's flags, becomes the cell's KV options.
func TestParseKVLoad(t *testing.T) {
	file := `load:
  url: "redis://127.0.0.1:{port}"
  scenario: kv-mixed
  concurrency: 50
  pipeline: 8
  key_minimum: 1
  key_maximum: 100000
  key_dist: "zipf:0.99"
  data_size_list: "100:9,4000:1"
  ratio: "1:10"
  expiry_range: "10-60"
  miss_ratio: 0.05
  seed: 42
cells:
  - name: redis
    server: {command: [redis-server, --port, "{port}"]}
  - name: ours
    server: {command: ["{wirebench}", serve, --resp, "127.0.0.1:{port}"]}
    load: {key_dist: gaussian}
`
	def, err := Parse("s.yaml", []byte(file), noFiles)
	if err != nil {
		t.Fatal(err)
	}
	k := def.Cells[0].Load.KV
	if k == nil || k.Name != "kv-mixed" || k.Pipeline != 8 || k.KeyMin != 1 || k.KeyMax != 100000 || k.KeyDist.String() != "zipf:0.99" ||
		k.Sizes.String() != "100:9,4000:1" || k.Ratio.String() != "1:10" || k.ExpiryMin != 10*time.Second || k.ExpiryMax != time.Minute ||
		k.MissRatio != 0.05 || k.Seed != 42 || k.Protocol != "" {
		t.Errorf("cell 0's KV options %+v", k)
	}
	if k := def.Cells[1].Load.KV; k == nil || k.KeyDist.String() != "gaussian" || k.Seed != 42 {
		t.Errorf("cell 1's KV options %+v", k)
	}
	d := describeLoad(def.Cells[0].Load)
	if d.KeyDist != "zipf:0.99" || d.Ratio != "1:10" || d.ValueSizes != "100:9,4000:1" {
		t.Errorf("recorded client %v", d)
	}
	// --key-dist adds twins to a file's uniform KV cells; cells already skewed keep one copy.
	uni, _ := Parse("s.yaml", []byte(strings.ReplaceAll(file, `  key_dist: "zipf:0.99"`+"\n", "")), noFiles)
	tw, err := WithKeyDists(uni, []keydist.Spec{{Pattern: keydist.Zipf, Exp: 0.99}})
	if err != nil || len(tw.Cells) != 3 {
		t.Fatalf("%v; %d cells, want the uniform one's twin added", err, len(tw.Cells))
	}
}

// TestParseKVKeyMaximumZero: key_maximum: 0 is key 0 alone, not the
// default key space, and contradicts a key_minimum above it.
func TestParseKVKeyMaximumZero(t *testing.T) {
	file := `load:
  url: "redis://127.0.0.1:{port}"
  scenario: kv-get
  key_maximum: 0
cells:
  - name: redis
    server: {command: [redis-server, --port, "{port}"]}
`
	def, err := Parse("s.yaml", []byte(file), noFiles)
	if err != nil {
		t.Fatal(err)
	}
	k := *def.Cells[0].Load.KV
	k.URL = "redis://127.0.0.1:6379"
	s, err := scenario.NewKV(k)
	if err != nil || s.Options().Keys != 1 || s.Options().KeyMax != 0 {
		t.Errorf("key_maximum: 0: %v, options %+v, want key 0 alone", err, k)
	}
	bad := strings.Replace(file, "  key_maximum: 0\n", "  key_minimum: 3\n  key_maximum: 0\n", 1)
	if _, err := Parse("s.yaml", []byte(bad), noFiles); err == nil || !strings.Contains(err.Error(), "key_maximum: 0 is below key_minimum 3") {
		t.Errorf("key_minimum 3, key_maximum 0: %v", err)
	}
}

// TestKVBenchBoth: where redis-benchmark measured both servers, each
// client's ratio of ours to Redis is in the table.
func TestKVBenchBoth(t *testing.T) {
	st := []kvCellStats{
		{op: "GET", persistence: "no persistence", label: "Redis", trials: 2, rps: []float64{100, 100}, benchRPS: []float64{50, 50}},
		{op: "GET", persistence: "no persistence", label: "wirebench RESP", trials: 2, rps: []float64{80, 80}, benchRPS: []float64{60, 60}},
		{op: "SET", persistence: "no persistence", label: "Redis", trials: 2, rps: []float64{100, 100}, benchRPS: []float64{50, 50}},
		{op: "SET", persistence: "no persistence", label: "wirebench RESP", trials: 2, rps: []float64{80, 80}}, // not measured
	}
	got := kvBenchBoth(st)
	if !strings.Contains(got, "| GET | no persistence | 0.80×") || !strings.Contains(got, "| 1.20×") || strings.Contains(got, "| SET |") {
		t.Errorf("table:\n%s", got)
	}
	if kvBenchBoth(st[2:]) != "" {
		t.Errorf("a table without both servers measured")
	}
}

// TestWithKeyDistsPipelined: a deeper pipeline adds, after each group's
// skewed twins, the RESP cells' twins at that depth (Redis's and ours,
// not HTTP's, which does not pipeline); --cells then keeps the goal's
// cells: both servers, everysec and always, pipelined and not.
func TestWithKeyDistsPipelined(t *testing.T) {
	def, _ := Lookup("kv")
	zipf := keydist.Spec{Pattern: keydist.Zipf, Exp: 0.99}
	got, err := WithKeyDists(def, []keydist.Spec{zipf}, 1, 16)
	if err != nil {
		t.Fatal(err)
	}
	resp, all := 0, 0
	for _, c := range def.Cells {
		if c.Load.KV != nil && c.Group != kvReplGroup {
			all++
			if c.Load.KV.Protocol == "resp" {
				resp++
			}
		}
	}
	if len(got.Cells) != len(def.Cells)+all+resp {
		t.Fatalf("%d cells, want %d + %d + %d", len(got.Cells), len(def.Cells), all, resp)
	}
	var groups []string
	deep := 0
	for _, c := range got.Cells {
		if len(groups) == 0 || groups[len(groups)-1] != c.Group {
			groups = append(groups, c.Group)
		}
		if !strings.HasSuffix(c.Group, ", zipf:0.99, -P 16") {
			if c.Load.KV != nil && c.Load.KV.Pipeline > 1 {
				t.Errorf("%s/%s pipelined %d", c.Group, c.Label, c.Load.KV.Pipeline)
			}
			continue
		}
		deep++
		if k := c.Load.KV; k.Pipeline != 16 || k.KeyDist != zipf || k.Protocol != "resp" || (c.Label != "Redis" && c.Label != "wirebench RESP") {
			t.Errorf("%s/%s: %+v", c.Group, c.Label, k)
		}
	}
	if deep != resp {
		t.Errorf("%d pipelined twins, want %d", deep, resp)
	}
	if want := []string{"SET, no persistence", "SET, no persistence, zipf:0.99", "SET, no persistence, zipf:0.99, -P 16"}; !slices.Equal(groups[:3], want) {
		t.Errorf("groups %v, want %v first", groups[:3], want)
	}
	if !strings.Contains(got.Description, "-P 16") {
		t.Errorf("description does not say the twins are pipelined: %s", got.Description)
	}
	if _, err := WithKeyDists(def, []keydist.Spec{zipf}, 0); !errors.Is(err, ErrDefinition) {
		t.Errorf("pipeline 0: %v", err)
	}

	sel, err := SelectCells(got, regexp.MustCompile(`(everysec|always), zipf.* / (Redis|wirebench RESP)$`))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range sel.Cells {
		names = append(names, c.Group+" / "+c.Label)
	}
	if len(sel.Cells) != 16 || !slices.Contains(names, "GET, AOF always, zipf:0.99, -P 16 / wirebench RESP") || !slices.Contains(names, "SET, AOF everysec, zipf:0.99 / Redis") {
		t.Errorf("selected %d cells, want {SET, GET} × {everysec, always} × {-P 1, -P 16} × {Redis, ours}: %q", len(sel.Cells), names)
	}
	if _, err := SelectCells(got, regexp.MustCompile(`nothing like this`)); !errors.Is(err, ErrNoCells) {
		t.Errorf("a selection of no cell: %v", err)
	}
}
