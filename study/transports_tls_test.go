package study

import (
	"testing"

	"github.com/wirebench/wirebench/load/conn"
)

// bench/transports-tls.yaml (docs/http3.md) parses into its three cells,
// each on its transport, h3 on the UDP port, none checking the generated
// certificate (load: insecure).
func TestTransportsTLSStudyParses(t *testing.T) {
	def, err := ParseFile("../bench/transports-tls.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct{ transport, url string }{
		"h2": {conn.H2, "https://127.0.0.1:{port3}/users/1"},
		"h1": {conn.HTTP1, "https://127.0.0.1:{port3}/users/1"},
		"h3": {conn.H3, "https://127.0.0.1:{port4}/users/1"},
	}
	if len(def.Cells) != len(want) {
		t.Fatalf("%d cells, want %d", len(def.Cells), len(want))
	}
	for _, c := range def.Cells {
		r, w := c.Load.Raw, want[c.Label]
		if r == nil || r.Transport != w.transport || r.URL != w.url || !r.Insecure {
			t.Errorf("cell %s: %+v, want transport %s at %s, insecure", c.Label, r, w.transport, w.url)
		}
	}
}
