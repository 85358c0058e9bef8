package toon

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestRowPlanMatchesGeneric checks the fused struct fast path (nextToken,
// planRow) against the general path (splitDelimited, parsePrimitive) on
// rows with awkward cells: both must accept the same rows and agree on
// every value.
func TestRowPlanMatchesGeneric(t *testing.T) {
	cells := []string{
		"a", "", " ", "  x  ", `"a,b"`, `"a|b"`, `"q\"uote"`, `"bad\q"`, `"unterminated`, `a"b,c"`,
		`"x" `, `"x"y`, `"x" y`, "1", "-0", "05", "1e5", "true", "null", "false ", "é", `\`, `a\b`,
		`"tab\there"`, `"\u0041"`, "[]", "-", "#", "1.50",
	}
	type row struct {
		A any `toon:"a"`
		B any `toon:"b"`
		C any `toon:"c"`
	}
	r := rand.New(rand.NewPCG(7, 7))
	checked := 0
	for range 3000 {
		delim := []string{",", "\t", "|"}[r.IntN(3)]
		n := 1 + r.IntN(3)
		var lines []string
		for range n {
			w := 2 + r.IntN(3) // sometimes the wrong width
			parts := make([]string, w)
			for i := range parts {
				parts[i] = cells[r.IntN(len(cells))]
			}
			lines = append(lines, "  "+strings.Join(parts, delim))
		}
		hdr := "[" + string(rune('0'+n))
		if delim != "," {
			hdr += delim
		}
		doc := hdr + "]{a" + delim + "b" + delim + "c}:\n" + strings.Join(lines, "\n")
		var typed []row
		errTyped := Unmarshal([]byte(doc), &typed)
		var generic any
		errGeneric := Unmarshal([]byte(doc), &generic)
		if (errTyped == nil) != (errGeneric == nil) {
			t.Fatalf("doc %q: typed err %v, generic err %v", doc, errTyped, errGeneric)
		}
		if errTyped != nil {
			continue
		}
		for i, o := range generic.([]any) {
			want := o.(Object)
			got := Object{{"a", typed[i].A}, {"b", typed[i].B}, {"c", typed[i].C}}
			if !equalValues(got, want) {
				t.Fatalf("doc %q row %d: typed %v, generic %v", doc, i, got, want)
			}
		}
		checked++
	}
	t.Logf("%d valid tables compared", checked)
	if checked == 0 {
		t.Fatal("no table compared")
	}
}

func TestParseTimeMatchesStdlib(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for range 20000 {
		tm := time.Unix(r.Int64N(500e9)-62135596800, r.Int64N(1e9)).UTC()
		s := tm.Format(time.RFC3339Nano)
		if r.IntN(10) == 0 { // some invalid dates
			s = s[:8] + "31" + s[10:]
		}
		want, wantErr := time.Parse(time.RFC3339Nano, s)
		got, err := parseTime(s)
		if (err == nil) != (wantErr == nil) || got != want {
			t.Fatalf("parseTime(%q) = %v, %v; time.Parse gives %v, %v", s, got, err, want, wantErr)
		}
		if string(appendTime(nil, tm)) != tm.Format(time.RFC3339Nano) {
			t.Fatalf("appendTime(%v) = %q", tm, appendTime(nil, tm))
		}
	}
}
