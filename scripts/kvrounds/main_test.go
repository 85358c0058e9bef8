package main

import (
	"strings"
	"testing"
)

// rounds builds n paired rounds of one cell: redis at 10,000 req/s and a
// p99 of 2 ms times a per-round drift, ours at rate× and p99× of that.
func rounds(n int, rate, p99 float64) []row {
	var rs []row
	for i := range n {
		drift := 1 + 0.3*float64(i%3) - 0.01*float64(i) // the machine moves both
		rs = append(rs,
			row{Round: i + 1, Server: "redis", Mode: "always", Op: "SET", P: 1, RPS: 10000 * drift, P99: 2 / drift, CPU: 10},
			row{Round: i + 1, Server: "ours", Mode: "always", Op: "SET", P: 1, RPS: 10000 * drift * rate * (1 + 0.001*float64(i)), P99: 2 / drift * p99, CPU: 9})
	}
	return rs
}

func TestVerdicts(t *testing.T) {
	for _, c := range []struct {
		name      string
		rows      []row
		want, not string
	}{
		{"ahead in every round", rounds(8, 1.05, 0.95), "**met**", "not met"},
		{"behind in rate", rounds(8, 0.95, 0.95), "**not met**: rate below", "**met**"},
		{"above in p99", rounds(8, 1.05, 1.1), "**not met**: p99 above", "**met**"},
		{"too few rounds", rounds(4, 1.05, 0.95), "4 rounds cannot decide", "**met**"},
	} {
		var b strings.Builder
		write(&b, c.rows, 0)
		out := b.String()
		if !strings.Contains(out, c.want) || strings.Contains(out, c.not) {
			t.Errorf("%s: want %q and not %q in\n%s", c.name, c.want, c.not, out)
		}
	}
}
