package report

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/results"
)

func labFixture() *results.Study {
	cpu := func(ns float64) results.PayloadCPU {
		return results.PayloadCPU{Ns: ns, NsMin: ns * 0.9, NsMax: ns * 1.2, Allocs: 3, Batches: 5, Loops: 10}
	}
	p := &results.PayloadLab{
		Schema: results.PayloadLabSchema, Start: time.Unix(1764300000, 0), End: time.Unix(1764300002, 0),
		Input: results.PayloadInput{Files: []string{"users.json"}, Kind: "json", Read: 100, Kept: 10, Sampled: true, Bytes: 12345},
		Rows: []results.PayloadRow{
			{Format: "json", Library: "encoding/json", Samples: 10, Bytes: results.PayloadBytes{Median: 1000, Min: 900, Max: 1100}, Encode: cpu(2000), Decode: cpu(5000),
				Own: &results.PayloadOwn{Calls: "json.Marshal(v); json.Unmarshal(b, &v), v any", Encode: cpu(1980), Decode: cpu(4100),
					EncodeRatio: 1.01, DecodeRatio: 1.22, Adds: "decode: the limit scan"}},
			{Format: "json", Library: "encoding/json", Compression: "gzip", Samples: 10, Bytes: results.PayloadBytes{Median: 300, Min: 280, Max: 320}, Encode: cpu(9000), Decode: cpu(7000)},
			{Format: "toon", Library: "wirebench/toon", Samples: 10, Bytes: results.PayloadBytes{Median: 600, Min: 550, Max: 650}, Encode: cpu(1500), Decode: cpu(3000)},
			{Format: "toon", Library: "wirebench/toon", Compression: "gzip", Samples: 10, Bytes: results.PayloadBytes{Median: 290, Min: 270, Max: 310}, Encode: cpu(8000), Decode: cpu(5000)},
		},
		RoundTrips: []results.PayloadRoundTrip{
			{Format: "json", Verdict: results.RoundTripLossy, Samples: 10, Changed: 3, How: "map[string]any",
				Changes: []results.PayloadChange{{Kind: "int past 2^53", Count: 3, Sample: 4, Path: "$.id", Before: "9007199254740993", After: "9007199254740992"}}},
			{Format: "toon", Verdict: results.RoundTripLossless, Samples: 10},
		},
		LeftOut: []results.PayloadLeftOut{{Format: "protobuf", Reason: "no schema"}},
		Shape:   &results.PayloadShape{Samples: 100, DepthMedian: 2, DepthMax: 3, Objects: 100, Keys: 400, DistinctKeys: 4, ObjectArrays: 1, UniformArrays: 1, UniformItems: 50},
	}
	return results.FromPayloadLab(p)
}

func TestPayloadLabReports(t *testing.T) {
	rep := Build(labFixture())
	var md, html, cs bytes.Buffer
	if err := WriteMarkdown(&md, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Payload lab,", "## Formats on these payloads", "| toon | gzip | 290 B |", "-40%",
		"int past 2^53", "9007199254740992", "protobuf left out: no schema", "uniform tables", "a uniform random 10 of them",
		"## Codec cost against each library's own", "| json | 2.000µs | 1.980µs | 1.01× | 5.000µs | 4.100µs | 1.22× † |",
		"json: timed json.Marshal(v); json.Unmarshal(b, &v), v any; wirebench adds: decode: the limit scan"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	if err := WriteHTML(&html, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Bytes against CPU per message", "<polyline", "toon + gzip: 290 B per message", "Round trip",
		"Codec cost against each library", "1.22× †"} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("html lacks %q", want)
		}
	}
	if err := WriteCSV(&cs, rep); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&cs).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		if _, dup := col[h]; !dup {
			col[h] = i
		}
	}
	var lab, rt int
	for _, r := range rows[1:] {
		switch r[0] {
		case "payload_lab":
			lab++
			if r[col["lab_format"]] == "toon" && r[col["lab_compression"]] == "gzip" && r[col["bytes_per_msg_median"]] != "290" {
				t.Errorf("toon gzip bytes %q, want 290", r[col["bytes_per_msg_median"]])
			}
			if r[col["lab_format"]] == "json" && r[col["lab_compression"]] == "none" &&
				(r[col["own_decode_ns_per_msg"]] != "4100" || r[col["decode_ratio"]] != "1.22") {
				t.Errorf("json's own decode %q ratio %q, want 4100 and 1.22", r[col["own_decode_ns_per_msg"]], r[col["decode_ratio"]])
			}
		case "round_trip":
			rt++
			if r[col["change"]] != "int past 2^53" || r[col["change_after"]] != "9007199254740992" {
				t.Errorf("round_trip row %v", r)
			}
		}
	}
	if lab != 4 || rt != 1 {
		t.Errorf("%d payload_lab rows and %d round_trip rows, want 4 and 1", lab, rt)
	}
}

// Reports of other results keep their CSV header: the lab's columns
// appear only in a lab's report.
func TestPayloadLabCSVColumnsOnlyInLab(t *testing.T) {
	var cs bytes.Buffer
	rep := Build(&results.Study{Schema: results.StudySchema, Study: "x"})
	if err := WriteCSV(&cs, rep); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(cs.String(), "bytes_per_msg_median") {
		t.Error("the lab's columns in a report without a lab")
	}
}
