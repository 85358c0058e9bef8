package payload

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/results"
)

// labOn runs the lab on one file holding data, untimed.
func labOn(t *testing.T, data string, o Options) *results.PayloadLab {
	t.Helper()
	path := filepath.Join(t.TempDir(), "samples.json")
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if o.Time == 0 {
		o.Time = -1
	}
	lab, err := Run(context.Background(), []string{path}, o)
	if err != nil {
		t.Fatal(err)
	}
	return lab
}

func roundTrip(t *testing.T, lab *results.PayloadLab, format string) results.PayloadRoundTrip {
	t.Helper()
	for _, rt := range lab.RoundTrips {
		if rt.Format == format {
			return rt
		}
	}
	t.Fatalf("no round trip for %s", format)
	return results.PayloadRoundTrip{}
}

func change(rt results.PayloadRoundTrip, kind string) (results.PayloadChange, bool) {
	for _, c := range rt.Changes {
		if c.Kind == kind {
			return c, true
		}
	}
	return results.PayloadChange{}, false
}

// An int64 past 2^53 survives every format that keeps integers as
// integers and is named where a format's generic decoding reads numbers
// as float64 (encoding/json and goccy into an any).
func TestRoundTripNamesBigInt(t *testing.T) {
	lab := labOn(t, `{"id":9007199254740993,"n":1}`, Options{})
	for _, f := range []string{"json", "json-fast"} {
		rt := roundTrip(t, lab, f)
		c, ok := change(rt, ChangeBigInt)
		if rt.Verdict != results.RoundTripLossy || !ok || c.Path != "$.id" || c.Before != "9007199254740993" || c.After != "9007199254740992" {
			t.Errorf("%s: %+v, want lossy with %q at $.id 9007199254740993 → 9007199254740992", f, rt, ChangeBigInt)
		}
	}
	for _, f := range []string{"toon", "cbor", "msgpack"} {
		if rt := roundTrip(t, lab, f); len(rt.Changes) > 0 && rt.Verdict != results.RoundTripSpelling {
			t.Errorf("%s: %+v, want the big int kept", f, rt)
		}
	}
	if rt := roundTrip(t, lab, "toon"); rt.Verdict != results.RoundTripLossless {
		t.Errorf("toon: %+v, want lossless (ordered keys, exact digits)", rt)
	}
}

func TestRoundTripNamesSpellingAndOrder(t *testing.T) {
	lab := labOn(t, `{"b":1.0,"a":1e5,"c":0.1}`, Options{})
	rt := roundTrip(t, lab, "json")
	if rt.Verdict != results.RoundTripSpelling {
		t.Errorf("json verdict %q, want %q: %+v", rt.Verdict, results.RoundTripSpelling, rt)
	}
	if c, ok := change(rt, ChangeFloatSpell); !ok || c.Count != 2 || c.Before != "1.0" || c.After != "1" {
		t.Errorf("json: float spelling %+v, want 2, first 1.0 → 1", c)
	}
	if c, ok := change(rt, ChangeKeyOrder); !ok || c.Before != "b,a,c" || c.After != "a,b,c" {
		t.Errorf("json: key order %+v, want b,a,c → a,b,c", c)
	}
	if _, ok := change(roundTrip(t, lab, "toon"), ChangeKeyOrder); ok {
		t.Error("toon keeps key order, but a change was named")
	}
}

// The comparison itself, on values no generic codec produces: null
// against missing, a zero dropped, bytes, timestamps, int64 as a string.
func TestCompareKinds(t *testing.T) {
	parse := func(s string) Value {
		v, err := parseValue([]byte(s), 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		want, got string
		mod       func(*Value)
		kind      string
	}{
		{`{"a":null,"b":1}`, `{"b":1}`, nil, ChangeNullMissing},
		{`{"a":0,"b":1}`, `{"b":1}`, nil, ChangeZeroDropped},
		{`{"b":1}`, `{"a":"","b":1}`, nil, ChangeDefaultAdded},
		{`{"a":5}`, `{}`, nil, ChangeMissing},
		{`{"a":"aGVsbG8gd29ybGQ_"}`, `{"a":"aGVsbG8gd29ybGQ/"}`, nil, ChangeBase64Spell},
		{`{"a":"aGVsbG8="}`, `{"a":"x"}`, func(v *Value) { v.Obj[0].Val = Value{Kind: Bytes, Str: "aGVsbG8="} }, ChangeBytes},
		{`{"t":"2025-01-02T03:04:05.100+00:00"}`, `{"t":"2025-01-02T03:04:05.100Z"}`, nil, ChangeTimeSpell},
		{`{"t":"2025-01-02T03:04:05.123456789Z"}`, `{"t":"2025-01-02T03:04:05Z"}`, nil, ChangeTimeValue},
		{`{"t":"2025-01-02T03:04:05.5Z"}`, `{}`, func(v *Value) { v.Obj = []Member{{"t", Value{Kind: Time, Str: "2025-01-02T03:04:05.5Z"}}} }, ChangeTimeSpell},
		{`{"d":"3.5s"}`, `{"d":"3.500s"}`, nil, ChangeDurSpell},
		{`{"d":"-0.000000001s"}`, `{"d":"-0.000000001s"}`, nil, ""},
		{`{"d":"3.5s"}`, `{"d":"3.501s"}`, nil, ChangeString},
		{`{"d":"-3s"}`, `{"d":"3.000s"}`, nil, ChangeString},
		{`{"n":9007199254740993}`, `{"n":"9007199254740993"}`, nil, ChangeIntAsString},
		{`{"n":1,"n":2}`, `{"n":2}`, nil, ChangeDuplicateKey},
		{`[1,2]`, `[1]`, nil, ChangeLength},
		{`"a"`, `1`, nil, ChangeType},
		{`"é"`, `"e"`, nil, ChangeString},
		{`1.5`, `1.25`, nil, ChangeNumber},
	} {
		w, g := parse(c.want), parse(c.got)
		if c.mod != nil {
			c.mod(&g)
		}
		ch := newChanges()
		ch.compare(w, g)
		if c.kind == "" {
			if ch.changed {
				t.Errorf("%s → %s: changes %v, want none", c.want, c.got, ch.order)
			}
			continue
		}
		if _, ok := ch.byKind[c.kind]; !ok {
			t.Errorf("%s → %s: changes %v, want %q", c.want, c.got, ch.order, c.kind)
		}
	}
	ch := newChanges()
	v := parse(`{"a":[1,{"b":"x","c":null}],"d":1.5e300}`)
	ch.compare(v, v)
	if ch.changed {
		t.Errorf("a value against itself: %v", ch.order)
	}
}

func TestLimits(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		data string
		o    Options
		want string
	}{
		{`{"a":1}` + "\n" + `{"a":` + strings.Repeat("1", 200) + `}`, Options{MaxSample: 100}, "s.json:2: sample too large: longer than 100 bytes (--max-sample)"},
		{`{"a":[[[1]]]}`, Options{MaxDepth: 3}, "s.json:1:8: nesting deeper than 3 levels"},
		{strings.Repeat(" ", 200) + `{}`, Options{MaxFileSize: 100}, "202 bytes, over the limit of 100"},
		{"{\"a\":1}\n{\"a\":\n  tru}", Options{}, "s.json:3:3: unexpected 't'"},
		{"  ", Options{}, "no JSON value"},
		{`{"a":1}` + "\n" + `[` + strings.Repeat(`1,`, 2000) + `1]`, Options{MaxKept: 100 << 10}, "s.json:2: sample 1: about 160.3 KiB in memory to measure (its 3.909 KiB of JSON, 2002 values), over the limit of 100.0 KiB (--max-kept)"},
		// A bracket closed by the wrong kind: the splitter, counting
		// nesting only, read on to the end of the file or the bound.
		{"{\"a\":1}\n{\"v\":[1,2,}\n" + strings.Repeat("{\"a\":1}\n", 50), Options{}, "s.json:2:11: "},
		{"{\"a\":1}\n{\"v\":[1,2,}\n" + strings.Repeat("{\"a\":1}\n", 50), Options{MaxSample: 100}, "s.json:2:11: "},
		{"{\"a\":1}\n{\"v\":[1,\n2}", Options{}, "s.json:3:2: "},
	} {
		p := write("s.json", c.data)
		c.o.Time = -1
		_, err := Run(context.Background(), []string{p}, c.o)
		if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want ErrInput with %q", cut(c.data, 30), err, c.want)
		}
	}
}

func TestSampleBound(t *testing.T) {
	var b strings.Builder
	for i := range 50 {
		b.WriteString(`{"i":` + strings.Repeat("1", 1+i%5) + "}\n")
	}
	lab := labOn(t, b.String(), Options{Samples: 10})
	if lab.Input.Read != 50 || lab.Input.Kept != 10 || !lab.Input.Sampled || lab.Shape.Samples != 50 {
		t.Errorf("input %+v, shape over %d; want 50 read, 10 kept, sampled, shape over all 50", lab.Input, lab.Shape.Samples)
	}
	if r := lab.Rows[0]; r.Samples != 10 {
		t.Errorf("measured %d samples, want 10", r.Samples)
	}
}

func TestTimedRun(t *testing.T) {
	lab := labOn(t, `[{"id":1,"name":"a"},{"id":2,"name":"b"}]`, Options{Time: 5 * 1e6, Compressions: []string{"gzip"}})
	if len(lab.Rows) != 12 {
		t.Fatalf("%d rows, want 6 formats × (none, gzip)", len(lab.Rows))
	}
	for _, r := range lab.Rows {
		if r.Encode.Ns <= 0 || r.Decode.Ns <= 0 || r.Encode.NsMin > r.Encode.Ns || r.Encode.Ns > r.Encode.NsMax || r.Bytes.Median <= 0 {
			t.Errorf("%s %s: %+v", r.Format, r.Compression, r)
		}
	}
	if lab.LeftOut[0].Format != "protobuf" {
		t.Errorf("left out %+v, want protobuf without a schema", lab.LeftOut)
	}
}

func TestWholeArrayIsOneSample(t *testing.T) {
	list := `[{"id":1,"name":"a"},{"id":2,"name":"b"},{"id":3,"name":"c"}]`
	lab := labOn(t, list, Options{Whole: true})
	s := lab.Shape
	if lab.Input.Read != 1 || s.UniformArrays != 1 || s.UniformItems != 3 || s.ObjectArrays != 1 {
		t.Errorf("input %+v shape %+v: want one sample, one uniform array of 3", lab.Input, s)
	}
	if lab := labOn(t, list, Options{}); lab.Input.Read != 3 {
		t.Errorf("without Whole: %d samples, want 3", lab.Input.Read)
	}
}

// Recordings give their JSON request bodies; other bodies are counted.
func TestRecordedInputs(t *testing.T) {
	dir := t.TempDir()
	har := filepath.Join(dir, "trace.har")
	os.WriteFile(har, []byte(`{"log":{"version":"1.2","entries":[
 {"startedDateTime":"2025-01-02T03:04:05Z","request":{"method":"POST","url":"http://h/users","headers":[],
  "postData":{"mimeType":"application/json","text":"{\"name\":\"Ada\",\"id\":9007199254740993}"}},"response":{"status":201}},
 {"startedDateTime":"2025-01-02T03:04:06Z","request":{"method":"GET","url":"http://h/users","headers":[]},"response":{"status":200}},
 {"startedDateTime":"2025-01-02T03:04:07Z","request":{"method":"POST","url":"http://h/x","headers":[],
  "postData":{"mimeType":"text/plain","text":"hello"}},"response":{"status":200}}]}}`), 0o644)
	lab, err := Run(context.Background(), []string{har}, Options{Time: -1})
	if err != nil {
		t.Fatal(err)
	}
	if lab.Input.Kind != InputHAR || lab.Input.Read != 1 || lab.Input.Skipped != 2 {
		t.Errorf("HAR: %+v, want one JSON body, two skipped", lab.Input)
	}
	if _, ok := change(roundTrip(t, lab, "json"), ChangeBigInt); !ok {
		t.Error("HAR body's big int not checked")
	}
	rl := filepath.Join(dir, "requests.log")
	os.WriteFile(rl, []byte(`{"wirebench":"requests/v1"}
{"t":1,"m":"POST","u":"/users","b":"eyJuYW1lIjoiQWRhIn0=","s":201}
{"t":2,"m":"POST","u":"/users","b":"eyJuYW1lIjoi","s":400}
`), 0o644)
	_, err = Run(context.Background(), []string{rl}, Options{Time: -1})
	if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "request 2 (POST /users): unexpected end of input") {
		t.Errorf("a truncated recorded body: %v, want ErrInput naming request 2", err)
	}
}

// Large samples are kept within the memory bound: fewer than --sample.
func TestKeptMemoryBound(t *testing.T) {
	var b strings.Builder
	for range 40 {
		b.WriteString(`{"a":"` + strings.Repeat("x", 1000) + `","n":[1,2,3]}` + "\n")
	}
	lab := labOn(t, b.String(), Options{Samples: 30, MaxKept: 10 * 1400})
	if lab.Input.Read != 40 || lab.Input.Kept >= 30 || lab.Input.Kept < 5 || !lab.Input.Sampled {
		t.Errorf("input %+v: want 40 read and fewer than 30 kept (memory bound), said to be sampled", lab.Input)
	}
}

// A sample a format writes but cannot read back (TOON refuses the
// duplicate key it wrote) is named in the round trip and left out of the
// decode's timing, instead of failing the run.
func TestTimedRunWithUndecodableSample(t *testing.T) {
	lab := labOn(t, "{\"dup\":1,\"other\":2,\"dup\":3}\n{\"a\":1}\n", Options{Time: 5 * 1e6, Compressions: []string{}})
	rt := roundTrip(t, lab, "toon")
	if c, ok := change(rt, ChangeDecode); !ok || !strings.Contains(c.After, "duplicate key") {
		t.Errorf("toon round trip %+v, want the duplicate key's decode named", rt.Changes)
	}
	for _, r := range lab.Rows {
		if r.Format == "toon" && (r.Samples != 2 || r.Decode.Ns <= 0 || r.Encode.Ns <= 0) {
			t.Errorf("toon row %+v, want both samples sized and the decode timed on the one that decodes", r)
		}
	}
}
