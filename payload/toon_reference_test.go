package payload

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/testkit"
)

// The TOON sizes the lab reports are the reference implementation's: the
// documents of the worked examples (docs/payload.md) and the orders,
// encoded by @toon-format/toon through toon/testdata/reference's helper,
// give the same bytes as the toon format here.
func TestTOONSizeMatchesReference(t *testing.T) {
	dir := filepath.Join("..", "toon", "testdata", "reference")
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, "node_modules", "@toon-format", "toon", "package.json"))
	}
	if err != nil {
		msg := "reference implementation not installed: run npm ci in toon/testdata/reference"
		if testkit.InCI() {
			t.Fatalf("%s (%v)", msg, err)
		}
		t.Skip(msg)
	}
	var docs [][]byte
	users, err := os.ReadFile("../docs/figures/2026-11-29/payload/users100.json")
	if err != nil {
		t.Fatal(err)
	}
	docs = append(docs, users)
	for _, f := range []string{"../docs/figures/2026-11-29/payload/deep.jsonl", "testdata/orders.jsonl"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			docs = append(docs, []byte(l))
		}
	}
	toonF := genericFormats()[2]
	var reqs bytes.Buffer
	var ours [][]byte
	for _, d := range docs {
		v, err := parseValue(d, 64)
		if err != nil {
			t.Fatal(err)
		}
		// JavaScript reads numbers as float64: leave out documents with
		// an integer past 2^53 (the reference would round it).
		if hasBigInt(v) {
			continue
		}
		in, err := toonF.toGo(v)
		if err != nil {
			t.Fatal(err)
		}
		b, err := toonF.codec.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		ours = append(ours, b)
		line, _ := json.Marshal(map[string]any{"value": json.RawMessage(d), "toon": string(b),
			"options": map[string]any{"delimiter": ",", "indentSize": 2}})
		reqs.Write(append(line, '\n'))
	}
	cmd := exec.Command(node, "diff.mjs")
	cmd.Dir = dir
	cmd.Stdin = &reqs
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node diff.mjs: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 16<<20)
	i := 0
	for ; sc.Scan(); i++ {
		var rep struct {
			Encoded *string `json:"encoded"`
			Err     string  `json:"encodeError"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rep); err != nil || rep.Encoded == nil {
			t.Fatalf("reply %d: %v %s", i, err, rep.Err)
		}
		if *rep.Encoded != string(ours[i]) {
			t.Errorf("document %d: ours %d bytes, the reference's %d", i, len(ours[i]), len(*rep.Encoded))
		}
	}
	if i != len(ours) {
		t.Errorf("%d replies for %d documents", i, len(ours))
	}
}

func hasBigInt(v Value) bool {
	switch v.Kind {
	case Number:
		return isInteger(v.Str) && pastFloat(v.Str)
	case Array:
		for _, e := range v.Arr {
			if hasBigInt(e) {
				return true
			}
		}
	case Object:
		for _, m := range v.Obj {
			if hasBigInt(m.Val) {
				return true
			}
		}
	}
	return false
}
