package study

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/results"
)

func TestParseLinks(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want []string
		err  string
	}{
		{[]string{"none,3g,4g"}, []string{"none", "3g", "4g"}, ""},
		{[]string{"none;rtt=50ms,loss=1%"}, []string{"none", "rtt=50ms,loss=1%"}, ""},
		{[]string{"none", "3g,loss=1%"}, []string{"none", "3g,loss=1%"}, ""}, // values: one link
		{[]string{"lte-lossy; satellite"}, []string{"lte-lossy", "satellite"}, ""},
		{[]string{"none,3g,none"}, nil, `"none" is given twice`},
		{[]string{"rtt=80"}, nil, "want a duration"},
		{[]string{"3gg"}, nil, "3gg"},
	} {
		got, err := ParseLinks(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrDefinition) {
				t.Errorf("%q: %v, want an ErrDefinition with %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%q: %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// TestWithLinks: one copy of every cell per link, link after link, each
// its own ID, the baseline of a group chosen on its link alone.
func TestWithLinks(t *testing.T) {
	cells := []Cell{{Group: "g", Label: "json"}, {Group: "g", Label: "toon"}}
	got := withLinks(cells, []string{"none", "3g"})
	var ids []string
	for _, c := range got {
		ids = append(ids, c.ID())
	}
	if want := []string{"g/json@none", "g/toon@none", "g/json@3g", "g/toon@3g"}; !slices.Equal(ids, want) {
		t.Fatalf("IDs %q, want %q", ids, want)
	}
	for i, want := range []bool{true, false, true, false} {
		if isBaseline(got, i) != want {
			t.Errorf("cell %s: baseline %v, want %v", got[i].ID(), !want, want)
		}
	}
	if len(withLinks(cells, nil)) != 2 || withLinks(cells, nil)[0].ID() != "g/json" {
		t.Error("no links axis changed the cells")
	}
}

func TestLinkAnswerMetric(t *testing.T) {
	a, note := linkAnswer(results.Answer{Metric: "server_cpu_per_req", Cell: "toon"})
	if a.Metric != "lat_p50" || a.Cell != "toon" || !strings.Contains(note, "server_cpu_per_req") {
		t.Errorf("%+v %q: want p50 latency, the cell kept, a note naming the study's metric", a, note)
	}
	for _, m := range []string{"lat_p99", "capacity"} {
		if a, note := linkAnswer(results.Answer{Metric: m}); a.Metric != m || note != "" {
			t.Errorf("%s became %+v (%q)", m, a, note)
		}
	}
}

func TestParseFileLinks(t *testing.T) {
	def, err := Parse("/x/my.yaml", []byte(core+"links: [none, 3g, \"rtt=50ms,loss=1%\"]\n"), noFiles)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"none", "3g", "rtt=50ms,loss=1%"}; !slices.Equal(def.Links, want) {
		t.Errorf("links %q, want %q", def.Links, want)
	}
	_, err = Parse("/x/my.yaml", []byte(core+"links: [none, \"rtt=50\"]\n"), noFiles)
	if err == nil || !strings.Contains(err.Error(), `my.yaml:11: links: "rtt=50": want a duration`) {
		t.Errorf("bad link: %v; want its line and what was wanted", err)
	}
}

// TestNetworksStudyDefinition: formats × {h1, h2, h3} and gRPC, on its
// links (fewer in a quick run, with longer runs than quick's default),
// every cell valid for Run.
func TestNetworksStudyDefinition(t *testing.T) {
	def, err := Lookup("networks")
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(def); err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, c := range def.Cells {
		labels = append(labels, c.Label)
	}
	for _, want := range []string{"json h1", "json h2", "json h3", "toon h3", "protobuf h2", "gRPC (protobuf)"} {
		if !slices.Contains(labels, want) {
			t.Errorf("no cell %q in %q", want, labels)
		}
	}
	full := Options{}.withDefaults(def)
	quick := Options{Quick: true}.withDefaults(def)
	if l := linksOf(def, full); !slices.Equal(l, networkLinks) || full.Duration != networkDuration {
		t.Errorf("full run: links %q, %v per trial", l, full.Duration)
	}
	if l := linksOf(def, quick); !slices.Equal(l, networkQuickLinks) || quick.Duration != networkQuickDuration || quick.Trials != 2 {
		t.Errorf("quick run: links %q, %d trials of %v", l, quick.Trials, quick.Duration)
	}
	if l := linksOf(def, Options{Quick: true, Links: []string{"3g"}}); !slices.Equal(l, []string{"3g"}) {
		t.Errorf("--links did not win: %q", l)
	}
	if err := checkLinks(networkLinks); err != nil {
		t.Error(err)
	}
}

// TestNetworkExamplesParse: the worked examples of docs/network.md are
// valid study files on the links they say.
func TestNetworkExamplesParse(t *testing.T) {
	for file, want := range map[string][]string{
		"../examples/network/h2-h3-loss.yaml":   {"rtt=50ms,rate=10mbit", "rtt=50ms,rate=10mbit,loss=1%", "rtt=50ms,rate=10mbit,loss=5%"},
		"../examples/network/toon-json-3g.yaml": {"none", "3g"},
	} {
		def, err := ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(def.Links, want) || len(def.Cells) != 2 {
			t.Errorf("%s: links %q, %d cells", file, def.Links, len(def.Cells))
		}
	}
}
