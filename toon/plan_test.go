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
			ln := "  " + strings.Join(parts, delim)
			switch r.IntN(12) { // layouts the scanner must handle, not fastRow
			case 0:
				ln += "\r"
			case 1:
				ln += "  "
			case 2:
				lines = append(lines, "  # comment")
			case 3:
				lines = append(lines, "")
			case 4:
				ln = "   " + ln[2:]
			case 5:
				ln = "    " + ln[2:]
			case 6:
				ln = "\t" + ln[2:]
			case 7:
				ln = "  key: " + ln[2:]
			}
			lines = append(lines, ln)
		}
		hdr := "[" + string(rune('0'+n))
		if delim != "," {
			hdr += delim
		}
		doc := hdr + "]{a" + delim + "b" + delim + "c}:\n" + strings.Join(lines, "\n")
		if r.IntN(2) == 0 {
			doc += "\n" // a final newline lets fastRow take the last row too
		}
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
