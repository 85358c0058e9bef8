package report

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/report/reporttest"
	"github.com/wirebench/wirebench/results"
)

// decodeTrack decodes a tracker file with a plain JSON decoder, as the
// tracker does.
func decodeTrack(t *testing.T, write func(io.Writer, *Report) error, r *results.Study, into any) {
	t.Helper()
	var b bytes.Buffer
	if err := write(&b, Build(r)); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b.Bytes(), []byte(`\u00`)) {
		t.Errorf("escaped characters in %s", b.String())
	}
	dec := json.NewDecoder(&b)
	dec.UseNumber()
	if err := dec.Decode(into); err != nil {
		t.Fatalf("%v:\n%s", err, b.String())
	}
}

// TestWriteBMF checks Bencher Metric Format as its published schema
// states it: an object of benchmarks, each an object of measures, each
// an object with a number "value" and optional number "lower_value" and
// "upper_value", nothing else; measure names at most 64 characters.
func TestWriteBMF(t *testing.T) {
	t.Parallel()
	study := reporttest.Results(reporttest.Options{})
	run := results.FromLoad(capLoad(500, 2*time.Millisecond))
	for name, r := range map[string]*results.Study{"study": study, "run": run} {
		t.Run(name, func(t *testing.T) {
			var doc map[string]map[string]map[string]any
			decodeTrack(t, WriteBMF, r, &doc)
			bounds := 0
			for bench, measures := range doc {
				if bench == "" || len(measures) == 0 {
					t.Errorf("benchmark %q with %d measures", bench, len(measures))
				}
				for measure, m := range measures {
					if measure == "" || len(measure) > 64 {
						t.Errorf("%s: measure name %q", bench, measure)
					}
					num := func(k string) (float64, bool) {
						v, ok := m[k]
						if !ok {
							return 0, false
						}
						n, isNum := v.(json.Number)
						if !isNum {
							t.Errorf("%s %s: %s is %T, not a number", bench, measure, k, v)
						}
						f, _ := n.Float64()
						return f, true
					}
					for k := range m {
						if k != "value" && k != "lower_value" && k != "upper_value" {
							t.Errorf("%s %s: unknown key %q", bench, measure, k)
						}
					}
					v, ok := num("value")
					lo, okLo := num("lower_value")
					hi, okHi := num("upper_value")
					if !ok || okLo != okHi || okLo && !(lo <= v && v <= hi) {
						t.Errorf("%s %s: value %v (%v) in [%v, %v]", bench, measure, v, ok, lo, hi)
					}
					if okLo {
						bounds++
					}
				}
			}
			switch name {
			case "study":
				rps := doc["synthetic/crud c=50/toon"]["rps"]["value"]
				if f, _ := rps.(json.Number).Float64(); f < 18000 || f > 19000 || bounds == 0 {
					t.Errorf("toon's rps %v (want its median, 18.50k), %d measures with bounds", rps, bounds)
				}
			case "run":
				p99 := doc["load/crud"]["p99"]["value"]
				if f, _ := p99.(json.Number).Float64(); f != float64(run.Trials[0].Load.Latency.Quantile(0.99)) || bounds != 0 {
					t.Errorf("p99 %v ns, %d bounds; want the run's p99 and no bounds from one run:\n%v", p99, bounds, doc)
				}
			}
		})
	}
}

// TestWriteBenchmarkAction checks github-action-benchmark's custom JSON:
// an array of {name, unit, value, range?, extra?}, one direction a file.
func TestWriteBenchmarkAction(t *testing.T) {
	t.Parallel()
	study := reporttest.Results(reporttest.Options{})
	for _, tc := range []struct {
		write      func(io.Writer, *Report) error
		want, not  string
		higherBest bool
	}{
		{WriteSmallerIsBetter, "synthetic/crud c=50/toon p99", "synthetic/crud c=50/toon rps", false},
		{WriteBiggerIsBetter, "synthetic/crud c=50/toon rps", "synthetic/crud c=50/toon p99", true},
	} {
		var doc []map[string]any
		decodeTrack(t, tc.write, study, &doc)
		names := map[string]map[string]any{}
		for _, b := range doc {
			for k, v := range b {
				_, isString := v.(string)
				_, isNum := v.(json.Number)
				switch {
				case k == "value" && isNum, (k == "name" || k == "unit" || k == "range" || k == "extra") && isString:
				default:
					t.Errorf("%v: key %q of %T", b, k, v)
				}
			}
			name, _ := b["name"].(string)
			if name == "" || b["unit"] == nil || b["value"] == nil {
				t.Errorf("entry without name, unit or value: %v", b)
			}
			m, ok := MetricByKey(map[string]string{"p99": "lat_p99", "rps": "rps"}[name[strings.LastIndex(name, " ")+1:]])
			if ok && m.HigherIsBetter != tc.higherBest {
				t.Errorf("%s in the wrong direction's file", name)
			}
			names[name] = b
		}
		if names[tc.want] == nil || names[tc.not] != nil {
			t.Errorf("have %q: %v, %q: %v", tc.want, names[tc.want] != nil, tc.not, names[tc.not] != nil)
		}
		if p99 := names["synthetic/crud c=50/toon p99"]; p99 != nil {
			v, _ := p99["value"].(json.Number).Float64()
			if p99["unit"] != "ms" || v < 3.8 || v > 4.1 || !strings.HasPrefix(p99["range"].(string), "± ") {
				t.Errorf("toon's p99: %v", p99)
			}
		}
	}
}
