package payload

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/results"
)

// compactLines encodes each line of a file with the compact JSON row's
// format, as the lab does.
func compactLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f := compactFormat()
	var out []string
	for _, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		v, err := parseValue([]byte(line), DefaultMaxDepth)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		in, err := f.toGo(v)
		if err != nil {
			t.Fatal(err)
		}
		b, err := f.codec.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

func jqLines(t *testing.T, jq, path string) []string {
	t.Helper()
	cmd := exec.Command(jq, "-c", ".", path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("jq -c . %s: %v: %s", path, err, stderr.String())
	}
	return strings.Split(strings.TrimRight(string(out), "\n"), "\n")
}

// The compact JSON row's bytes are jq -c's: keys in the input's order, a
// duplicate key's last value in its first place, no whitespace, strings
// re-escaped as jq does (no HTML escaping, \b and \f by name, DEL and the
// other control characters as \u00XX, every other character as UTF-8),
// numbers as written. encoding/json's bytes differ on most of these lines.
func TestCompactJSONIsJqs(t *testing.T) {
	jq := testkit.NeedTool(t, "jq", "apt-get install jq")
	ours, ref := compactLines(t, "testdata/jq.jsonl"), jqLines(t, jq, "testdata/jq.jsonl")
	if len(ours) != len(ref) {
		t.Fatalf("%d lines, jq %d", len(ours), len(ref))
	}
	for i := range ours {
		if ours[i] != ref[i] {
			t.Errorf("line %d: ours %s\n                jq %s", i+1, ours[i], ref[i])
		}
	}
}

// Numbers are kept as written: a jq that keeps a literal's digits (1.7
// and later) gives the same bytes; jq 1.6 rewrites every number as the
// float64 nearest it (2^53+1 → 2^53, 1.0 → 1), so there the rest is the
// same bytes and each number the same float64.
func TestCompactJSONNumbersAsJqKeepsThem(t *testing.T) {
	jq := testkit.NeedTool(t, "jq", "apt-get install jq")
	probe := exec.Command(jq, "-c", ".")
	probe.Stdin = strings.NewReader("[9007199254740993,1.0]")
	p, err := probe.Output()
	if err != nil {
		t.Fatal(err)
	}
	keeps := strings.TrimSpace(string(p)) == "[9007199254740993,1.0]"
	ours, ref := compactLines(t, "testdata/jq-numbers.jsonl"), jqLines(t, jq, "testdata/jq-numbers.jsonl")
	if len(ours) != len(ref) {
		t.Fatalf("%d lines, jq %d", len(ours), len(ref))
	}
	for i := range ours {
		if ours[i] == ref[i] {
			continue
		}
		if keeps {
			t.Errorf("line %d: ours %s, jq %s", i+1, ours[i], ref[i])
			continue
		}
		a, _ := parseValue([]byte(ours[i]), DefaultMaxDepth)
		b, _ := parseValue([]byte(ref[i]), DefaultMaxDepth)
		if !sameAsFloats(a, b) {
			t.Errorf("line %d: ours %s, jq (rounding numbers to float64) %s: not the same float64s", i+1, ours[i], ref[i])
		}
	}
	if !keeps {
		t.Logf("this jq rounds numbers to float64 (%s): numbers compared as float64", strings.TrimSpace(string(p)))
	}
}

// sameAsFloats reports a and b equal with each number read as float64
// (out of range: ±max, as jq 1.6 prints it).
func sameAsFloats(a, b Value) bool {
	if a.Kind != b.Kind || a.Str != b.Str && a.Kind != Number || a.Bool != b.Bool || len(a.Arr) != len(b.Arr) || len(a.Obj) != len(b.Obj) {
		return false
	}
	if a.Kind == Number {
		x, _ := strconv.ParseFloat(a.Str, 64)
		y, _ := strconv.ParseFloat(b.Str, 64)
		return x == y || x > 1.7976931348623157e308 && y == 1.7976931348623157e308
	}
	for i := range a.Arr {
		if !sameAsFloats(a.Arr[i], b.Arr[i]) {
			return false
		}
	}
	for i := range a.Obj {
		if a.Obj[i].Key != b.Obj[i].Key || !sameAsFloats(a.Obj[i].Val, b.Obj[i].Val) {
			return false
		}
	}
	return true
}

// The lab measures the compact row beside the libraries' JSON rows: it is
// lossless but for a duplicate key (which jq folds too), smaller than
// encoding/json's where the samples hold HTML, and decodes into its own
// ordered tree.
func TestCompactJSONRow(t *testing.T) {
	lab, err := Run(context.Background(), []string{"testdata/jq.jsonl"}, Options{Time: -1, Compressions: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	size := map[string]int64{}
	for _, r := range lab.Rows {
		names = append(names, r.Format)
		size[r.Format] = r.Bytes.Total
	}
	if strings.Join(names, ",") != "json,json-fast,json-compact,toon,cbor,msgpack" {
		t.Errorf("rows %v, want json-compact after the libraries' JSON", names)
	}
	rt := roundTrip(t, lab, compactName)
	if len(rt.Changes) != 1 || rt.Changes[0].Kind != ChangeDuplicateKey || rt.Verdict != results.RoundTripLossy {
		t.Errorf("round trip %+v, want only the duplicate key changed", rt)
	}
	var lib []byte
	for _, line := range compactLines(t, "testdata/jq.jsonl") {
		var v any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(v)
		lib = append(lib, b...)
	}
	if size[compactName] >= size["json"] || int64(len(lib)) != size["json"] {
		t.Errorf("compact %d bytes, encoding/json %d (json.Marshal gives %d): want compact smaller (no \\u003c)", size[compactName], size["json"], len(lib))
	}
}
