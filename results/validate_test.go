package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/measure"
)

// crafted is loadRun's JSON with one field replaced (path: keys, then the
// value), read back through Read as report and merge read files.
func crafted(t *testing.T, edit func(m map[string]any)) *Study {
	t.Helper()
	var buf bytes.Buffer
	if err := loadRun().WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Read(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return s
}

// TestValidateRefusesImpossibleResults: each crafted file fails with an
// error naming the field (report and merge accepted them all before).
func TestValidateRefusesImpossibleResults(t *testing.T) {
	t.Parallel()
	bigHist := func() any { // 200 values, for a run of 100 requests
		h := measure.NewHistogram()
		for range 200 {
			h.Record(time.Millisecond)
		}
		b, _ := json.Marshal(h)
		var v any
		json.Unmarshal(b, &v)
		return v
	}
	for _, tc := range []struct {
		name string
		edit func(m map[string]any)
		want string
	}{
		{"negative requests", func(m map[string]any) { m["requests"] = -5 }, "requests: impossible result: -5 is negative"},
		{"negative failed", func(m map[string]any) { m["failed"] = -1 }, "failed: impossible result: -1 is negative"},
		{"failed > requests", func(m map[string]any) { m["failed"] = 101 }, "failed: impossible result: 101 failures out of 100 requests"},
		{"negative interrupted", func(m map[string]any) { m["interrupted"] = -1 }, "interrupted: impossible result"},
		{"negative window", func(m map[string]any) { m["window_ns"] = -1 }, "window_ns: impossible result"},
		{"negative bytes", func(m map[string]any) { m["bytes"].(map[string]any)["wire_in"] = -10 }, "bytes.wire_in: impossible result: -10 is negative"},
		{"negative status count", func(m map[string]any) { m["status"] = map[string]any{"200": -1} }, `status["200"]: impossible result`},
		{"negative failure count", func(m map[string]any) { m["failures"] = map[string]any{"boom": -3} }, `failures["boom"]: impossible result`},
		{"failures disagree with failed", func(m map[string]any) { m["failures"] = map[string]any{"boom": 3} },
			"failures: impossible result: the messages count 3 failures, failed says 0"},
		{"latency count over requests", func(m map[string]any) { m["latency"] = bigHist() }, "latency: impossible result: holds 200 values for 100 requests"},
		{"service count over requests", func(m map[string]any) { m["service"] = bigHist() }, "service: impossible result: holds 200 values for 100 requests"},
		{"lag count over requests", func(m map[string]any) { m["lag"] = bigHist() }, "lag: impossible result: holds 200 values for 100 requests"},
		{"op latency over op requests", func(m map[string]any) { m["ops"].([]any)[0].(map[string]any)["latency"] = bigHist() },
			"ops[0] (GET /).latency: impossible result: holds 200 values for 100 requests"},
		{"op failed > op requests", func(m map[string]any) { m["ops"].([]any)[0].(map[string]any)["failed"] = 500 },
			"ops[0] (GET /).failed: impossible result: 500 failures out of 100 requests"},
		{"ops exceed total", func(m map[string]any) {
			none, _ := json.Marshal(measure.NewHistogram())
			var h any
			json.Unmarshal(none, &h)
			m["ops"] = append(m["ops"].([]any), map[string]any{"name": "again", "requests": 1, "latency": h, "service": h})
		}, "ops: impossible result: 101 requests in the operations, more than the 100 in all"},
		{"negative op", func(m map[string]any) { m["ops"].([]any)[0].(map[string]any)["requests"] = -1 }, "ops[0] (GET /): impossible result"},
		{"end before start", func(m map[string]any) { m["end"] = "2000-01-01T00:00:00Z" }, "end: impossible result"},
		{"negative client CPU", func(m map[string]any) { m["client_cpu"] = map[string]any{"user_ns": -1} }, "client_cpu.user_ns: impossible result"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(crafted(t, tc.edit))
			if !errors.Is(err, ErrImpossible) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v\nwant %s", err, tc.want)
			}
		})
	}
	if err := Validate(crafted(t, func(map[string]any) {})); err != nil {
		t.Errorf("the unedited run: %v", err)
	}
}

// TestValidateStudyNamesTheTrial: in a study, the error says which trial.
func TestValidateStudyNamesTheTrial(t *testing.T) {
	t.Parallel()
	bad := loadRun()
	bad.Failed = 200
	s := FromLoad(loadRun())
	s.SingleRun = false
	s.Trials = append(s.Trials, Trial{Cell: s.Cells[0].ID, Index: 1, Order: 1, Load: bad})
	err := Validate(s)
	if !errors.Is(err, ErrImpossible) || !strings.HasPrefix(err.Error(), "trials[1].load.failed: impossible result: 200 failures out of 100 requests") {
		t.Errorf("got %v", err)
	}
	s.Trials[1] = Trial{Cell: s.Cells[0].ID, Server: ServerStats{PeakRSS: -1}}
	if err := Validate(s); !errors.Is(err, ErrImpossible) || !strings.Contains(err.Error(), "trials[1].server.peak_rss_bytes") {
		t.Errorf("got %v", err)
	}
}

// TestCheckFileSize: a file over MaxFileSize is refused from its size,
// before reading (a sparse 1 GiB file: nothing on disk, nothing read).
func TestCheckFileSize(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "big.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	err = CheckFileSize(path)
	if !errors.Is(err, ErrResults) || !strings.Contains(err.Error(), "1073741824 bytes, more than the limit of 256 MiB") {
		t.Errorf("got %v", err)
	}
	if err := os.Truncate(path, 10); err != nil {
		t.Fatal(err)
	}
	if err := CheckFileSize(path); err != nil {
		t.Errorf("small file: %v", err)
	}
}

// FuzzValidate: whatever Read accepts, Validate judges without panicking,
// and an accepted result round-trips to an accepted result.
func FuzzValidate(f *testing.F) {
	var buf bytes.Buffer
	loadRun().WriteJSON(&buf)
	f.Add(buf.Bytes())
	f.Add([]byte(`{"schema":"` + LoadSchema + `","requests":-1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		if Validate(s) != nil {
			return
		}
		var out bytes.Buffer
		if err := s.Write(&out); err != nil {
			t.Fatal(err)
		}
		back, err := Read(&out)
		if err != nil {
			t.Fatal(err)
		}
		if err := Validate(back); err != nil {
			t.Fatalf("valid result invalid after a round trip: %v", err)
		}
	})
}
