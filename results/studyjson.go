package results

import (
	"bytes"
	"slices"
)

// MarshalJSON writes r with each cell's headline figures after its data:
// "cell_figures": {"<cell id>": {"trials": 6, "req_per_s": …, "p99_ms": …}},
// every catalogue metric the cell's trials have, as the median over them,
// named as report.csv names its columns (durations in ms). Written for
// readers (jq), never read: a study read back computes them again from
// its trials.
func (r *Study) MarshalJSON() ([]byte, error) {
	type plain Study // plain has no MarshalJSON: no recursion
	var b bytes.Buffer
	err := EncodeJSON(&b, struct {
		*plain
		CellFigures map[string]map[string]float64 `json:"cell_figures,omitempty"`
	}{(*plain)(r), r.cellFigures()}, "")
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), err
}

func (r *Study) cellFigures() map[string]map[string]float64 {
	out := map[string]map[string]float64{}
	for _, c := range r.Cells {
		trials := r.TrialsOf(c.ID)
		if len(trials) == 0 {
			continue
		}
		f := map[string]float64{"trials": float64(len(trials))}
		for _, m := range Metrics {
			var vs []float64
			for _, t := range trials {
				if v, ok := m.Value(t); ok {
					vs = append(vs, v)
				}
			}
			if len(vs) == 0 {
				continue
			}
			slices.Sort(vs)
			med := vs[len(vs)/2]
			if len(vs)%2 == 0 {
				med = (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
			}
			if m.Unit == UnitDuration {
				med /= 1e6 // ms, as the CSV column's name says
			}
			f[m.CSV] = med
		}
		out[c.ID] = f
	}
	return out
}
