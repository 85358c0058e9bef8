package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// jqPath follows a jq-like path (".latency.p99_ms", ".trials.0.load.rps")
// through a value decoded by a plain JSON decoder, as a reader of the file
// without wirebench would.
func jqPath(t *testing.T, doc any, path string) any {
	t.Helper()
	v := doc
	for _, k := range strings.Split(strings.TrimPrefix(path, "."), ".") {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[k]; !ok {
				t.Fatalf("%s: no %q", path, k)
			}
		case []any:
			var i int
			if _, err := fmt.Sscan(k, &i); err != nil || i >= len(x) {
				t.Fatalf("%s: no element %q", path, k)
			}
			v = x[i]
		default:
			t.Fatalf("%s: %q of a %T", path, k, v)
		}
	}
	return v
}

// TestResultFilesPlainNumbers reads every kind of result file with a
// plain JSON decoder and finds its headline figures as numbers: the
// latency percentiles beside each histogram's encoding, the rate, errors
// and the figures per request. Thresholds read as written, not
// HTML-escaped.
func TestResultFilesPlainNumbers(t *testing.T) {
	t.Parallel()
	l := loadRun()
	l.Failed = 4
	l.Bytes = Bytes{WireIn: 1000, WireOut: 500, BodyIn: 800, BodyOut: 100}
	l.CPU = CPU{User: 40 * time.Millisecond, System: 10 * time.Millisecond, CPUs: 1}
	l.Thresholds = []ThresholdResult{{Expr: "rps>1 && p99<5ms", Measured: "50.0", Pass: true}}
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	p99ms := ms(l.Latency.Quantile(0.99))
	study := FromLoad(l)
	study.SingleRun = false
	capacity := testCapacity()
	capacity.Confirm = &capacity.Steps[1]

	for _, tc := range []struct {
		name   string
		write  func(*bytes.Buffer) error
		prefix string // where the load result is in the file
	}{
		{"load", func(b *bytes.Buffer) error { return l.WriteJSON(b) }, ""},
		{"load line", func(b *bytes.Buffer) error { return l.WriteJSONLine(b) }, ""},
		{"study", func(b *bytes.Buffer) error { return study.Write(b) }, ".trials.0.load"},
		{"capacity", func(b *bytes.Buffer) error { return capacity.WriteJSON(b) }, ".confirm.load"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tc.write(&buf); err != nil {
				t.Fatal(err)
			}
			for _, esc := range []string{`\u003c`, `\u003e`, `\u0026`} {
				if bytes.Contains(buf.Bytes(), []byte(esc)) {
					t.Errorf("the file escapes HTML (%s)", esc)
				}
			}
			var doc any
			if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			num := func(path string) float64 {
				t.Helper()
				f, ok := jqPath(t, doc, tc.prefix+path).(float64)
				if !ok {
					t.Fatalf("%s%s is not a number", tc.prefix, path)
				}
				return f
			}
			if tc.name == "capacity" {
				if got := jqPath(t, doc, ".rate"); got != 1000.0 {
					t.Errorf(".rate = %v, want 1000", got)
				}
				if got := num(".latency.p99_ms"); got != 1 {
					t.Errorf(".latency.p99_ms = %v, want 1", got)
				}
				return
			}
			for path, want := range map[string]float64{
				".latency.p99_ms":             p99ms,
				".latency.p99_ns":             p99ms * 1e6,
				".latency.p50_ms":             ms(l.Latency.Quantile(0.5)), // 50 ms to HDR's precision
				".latency.max_ms":             ms(l.Latency.Max()),
				".latency.count":              100,
				".ops.0.latency.p999_ms":      ms(l.Ops[0].Latency.Quantile(0.999)),
				".service.mean_ms":            ms(l.Service.Mean()),
				".rps":                        50,
				".error_rate":                 0.04,
				".per_request.wire_in_bytes":  10,
				".per_request.body_out_bytes": 1,
				".per_request.client_cpu_ns":  500_000,
				".client_cpu_util":            0.025,
			} {
				if got := num(path); got != want {
					t.Errorf("%s = %v, want %v", path, got, want)
				}
			}
			if tc.name == "study" { // each cell's medians over its trials
				if got := jqPath(t, doc, ".cell_figures.raw.p99_ms"); got != p99ms {
					t.Errorf(".cell_figures.raw.p99_ms = %v, want %v", got, p99ms)
				}
				if got := jqPath(t, doc, ".cell_figures.raw.req_per_s"); got != 50.0 {
					t.Errorf(".cell_figures.raw.req_per_s = %v, want 50", got)
				}
			}
			if got := jqPath(t, doc, tc.prefix+".thresholds.0.expr"); got != "rps>1 && p99<5ms" {
				t.Errorf("threshold reads %q", got)
			}
			if s, _ := jqPath(t, doc, tc.prefix+".latency.hdr").(string); !strings.HasPrefix(s, "HISTF") {
				t.Errorf(".latency.hdr = %.20q, want the HdrHistogram encoding", s)
			}
		})
	}
}

// TestReadVersion1 reads files of the first version, whose histograms
// are bare encoded strings: a load run written by wirebench before this
// version, a capacity search and a study from docs/figures. Each is
// upgraded to the current schema and written again in the new form.
func TestReadVersion1(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ path, study string }{
		{"testdata/load-v1.json", "load"},
		{"../docs/figures/2026-11-27/capacity/tight1.json", "capacity"},
		{"../docs/figures/2026-11-23/formats/results.json", "formats"},
	} {
		t.Run(tc.study, func(t *testing.T) {
			raw, err := os.ReadFile(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(raw, []byte(`/v1"`)) {
				t.Fatalf("%s is not a version 1 file", tc.path)
			}
			s, err := Read(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			if s.Schema != StudySchema || s.Study != tc.study || len(s.Trials) == 0 {
				t.Fatalf("read as %q study %q, %d trials", s.Schema, s.Study, len(s.Trials))
			}
			tr := s.Trials[0]
			if tr.Load.Schema != LoadSchema || tr.Load.Latency.Count() == 0 {
				t.Errorf("trial load: schema %q, %d latencies", tr.Load.Schema, tr.Load.Latency.Count())
			}
			if c := tr.Capacity; c != nil && (c.Schema != CapacitySchema || c.Steps[0].Load.Schema != LoadSchema) {
				t.Errorf("capacity schema %q, its first step's load %q", c.Schema, c.Steps[0].Load.Schema)
			}
			var buf bytes.Buffer
			if err := s.Write(&buf); err != nil {
				t.Fatal(err)
			}
			back, err := Read(&buf)
			if err != nil {
				t.Fatal(err)
			}
			if !back.Trials[0].Load.Latency.Equal(tr.Load.Latency) {
				t.Error("the histogram changed when written again")
			}
		})
	}
	raw, err := os.ReadFile("testdata/load-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	l, err := ReadLoad(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if l.Schema != LoadSchema || l.Latency.Count() != l.Requests || len(l.Thresholds) != 2 || l.Thresholds[0].Expr != "p99<5s" {
		t.Errorf("v1 load read as schema %q, %d latencies of %d requests, thresholds %+v",
			l.Schema, l.Latency.Count(), l.Requests, l.Thresholds)
	}
}

// TestConnFromOldConfig: a result written before Conn kept the connection
// set-up in its configuration; read, it is in Conn, and the target and
// transport come from there.
func TestConnFromOldConfig(t *testing.T) {
	t.Parallel()
	l := loadRun()
	l.Schema = "wirebench.load/v1"
	l.Config = configOf(t, `{"scenario": "raw", "auto": "h3: Alt-Svc",
		"raw": {"url": "https://127.0.0.1:8443/", "transport": "h3"},
		"h3_handshakes_ns": [1500000, 2500000],
		"h3_0rtt": {"full_ns": [3000000], "resumed_ns": [1000000, 1000000], "Used": 2, "EarlyRequests": 5, "Refused": 0, "NoEarly": 0}}`)
	var buf bytes.Buffer
	if err := l.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := ReadLoad(&buf)
	if err != nil {
		t.Fatal(err)
	}
	c := back.Conn
	if c == nil || c.Auto != "h3: Alt-Svc" || c.Transport != "h3" || c.URL != "https://127.0.0.1:8443/" ||
		len(c.Handshakes) != 2 || c.Handshakes[1] != 2500*time.Microsecond ||
		c.ZeroRTT == nil || c.ZeroRTT.Used != 2 || c.ZeroRTT.EarlyRequests != 5 || len(c.ZeroRTT.Resumed) != 2 {
		t.Fatalf("conn %+v (0-RTT %+v)", c, c.ZeroRTT)
	}
	l.Conn = &Conn{URL: "https://example.test/", Transport: "h2"}
	if got := LoadTarget(l); got != "https://example.test/" {
		t.Errorf("LoadTarget = %q, want the conn's URL", got)
	}
	if tr, _ := LoadTransport(l); tr != "h2" {
		t.Errorf("LoadTransport = %q, want the conn's", tr)
	}
}
