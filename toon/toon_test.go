package toon

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/api"
)

func sampleUsers(n int) api.UserList {
	base := time.Date(2025, 3, 14, 9, 26, 53, 589793238, time.UTC)
	l := api.UserList{Users: make([]api.User, n)}
	for i := range l.Users {
		l.Users[i] = api.User{
			ID:        int64(i + 1),
			Name:      []string{"Ada Lovelace", "Alan Turing", "Grace Hopper", "Edsger Dijkstra"}[i%4],
			Email:     []string{"ada@example.com", "alan@example.org", "grace@navy.mil", "ewd@utexas.edu"}[i%4],
			CreatedAt: base.Add(time.Duration(i) * 1_234_567_891),
		}
	}
	return l
}

func TestMarshalUserList(t *testing.T) {
	l := sampleUsers(2)
	got, err := Marshal(&l)
	if err != nil {
		t.Fatal(err)
	}
	want := `users[2]{id,name,email,created_at}:
  1,Ada Lovelace,ada@example.com,"2025-03-14T09:26:53.589793238Z"
  2,Alan Turing,alan@example.org,"2025-03-14T09:26:54.824361129Z"`
	if string(got) != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	var back api.UserList
	if err := Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, l) {
		t.Fatalf("round trip: got %+v, want %+v", back, l)
	}
	// The value (not pointer) form takes the same path.
	got2, err := Marshal(l)
	if err != nil || string(got2) != want {
		t.Fatalf("Marshal(value) = %q, %v", got2, err)
	}
}

func TestRoundTripShapes(t *testing.T) {
	type inner struct {
		X int    `toon:"x"`
		Y string `json:"y"`
	}
	type mixed struct {
		Name    string            `toon:"name"`
		Tags    []string          `toon:"tags,omitempty"`
		Inner   inner             `toon:"inner"`
		Ptr     *inner            `toon:"ptr"`
		Rows    []inner           `toon:"rows"`
		Meta    map[string]int    `toon:"meta"`
		Any     any               `toon:"any"`
		F       float64           `toon:"f"`
		U       uint8             `toon:"u"`
		Bytes   []byte            `toon:"bytes"`
		Skip    string            `toon:"-"`
		Nested  map[string]inner  `toon:"nested"`
		Lists   [][]int           `toon:"lists"`
		When    time.Time         `toon:"when"`
		Opt     *string           `toon:"opt"`
		Num     Number            `toon:"num"`
		Objects []map[string]any  `toon:"objects"`
		Keyed   map[string]*inner `toon:"keyed"`
	}
	s := "x"
	v := mixed{
		Name: "- starts with hyphen", Tags: []string{"a", "b,c", ""},
		Inner: inner{1, "one"}, Ptr: &inner{2, "two"},
		Rows: []inner{{3, "three"}, {4, "fo:ur"}}, Meta: map[string]int{"b": 2, "a": 1},
		Any: []any{"x", Number("1.5"), true, nil, Object{{"k", "v"}}}, F: 1e-7, U: 255,
		Bytes: []byte{0, 1, 2}, Nested: map[string]inner{"p": {5, "five"}, "q": {6, "six"}},
		Lists: [][]int{{1, 2}, {}, {3}}, When: time.Date(2001, 2, 3, 4, 5, 6, 7, time.FixedZone("x", 3600)),
		Opt: &s, Num: "12345678901234567890", Objects: []map[string]any{{"a": 1}, {"b": []any{}}},
		Keyed: map[string]*inner{"k1": {1, "a"}, "k2": {2, "b"}},
	}
	ran := 0
	for _, d := range []Delimiter{Comma, Tab, Pipe} {
		t.Run(d.String(), func(t *testing.T) {
			ran++
			out, err := MarshalOptions{Delimiter: d, Indent: 3}.Marshal(&v)
			if err != nil {
				t.Fatal(err)
			}
			var back mixed
			if err := (UnmarshalOptions{Indent: 3}).Unmarshal(out, &back); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			// want is a copy: the fields compared apart are cleared in the
			// copies only, so every delimiter encodes the whole of v.
			want := v
			if !back.When.Equal(want.When) {
				t.Fatalf("time: %v vs %v", back.When, want.When)
			}
			// The generic forms differ by design (Number vs int), so Any and
			// Objects are compared as the JSON they convert to.
			for _, f := range []struct {
				name      string
				got, want any
			}{{"any", back.Any, want.Any}, {"objects", back.Objects, want.Objects}} {
				g, err1 := ToJSON(f.got)
				w, err2 := ToJSON(f.want)
				if err1 != nil || err2 != nil || string(g) != string(w) || len(w) < 10 {
					t.Fatalf("%s: %s vs %s (%v, %v)", f.name, g, w, err1, err2)
				}
			}
			back.Any, want.Any = nil, nil
			back.When, want.When = time.Time{}, time.Time{}
			back.Objects, want.Objects = nil, nil
			if !reflect.DeepEqual(back, want) {
				t.Fatalf("round trip mismatch\n%+v\n%+v\n%s", back, want, out)
			}
		})
	}
	if ran != 3 || v.Any == nil || v.Objects == nil || v.When.IsZero() {
		t.Fatalf("ran %d delimiters; input after the loop: %+v", ran, v)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name, in string
		opts     UnmarshalOptions
		sentinel error
		pos      string
	}{
		{"count", "a[3]: 1,2", UnmarshalOptions{}, ErrCount, "line 1"},
		{"rows", "a[2]{x}:\n  1", UnmarshalOptions{}, ErrCount, "line 2"},
		{"width", "a[1]{x,y}:\n  1", UnmarshalOptions{}, ErrCount, "line 2"},
		{"indent", "a:\n   b: 1", UnmarshalOptions{}, ErrSyntax, "line 2, column 4"},
		{"escape", "a:\n  b: \"x\\q\"", UnmarshalOptions{}, ErrSyntax, "line 2, column 6"},
		{"missing colon", "a: 1\nb", UnmarshalOptions{}, ErrSyntax, "line 2, column 1"},
		{"duplicate", "a: 1\na: 2", UnmarshalOptions{}, ErrDuplicateKey, "line 2, column 1"},
		{"depth", "a:\n  b:\n    c:\n      d: 1", UnmarshalOptions{MaxDepth: 2}, ErrDepth, "line 3, column 5"},
		{"utf8", "a: \xff", UnmarshalOptions{}, ErrSyntax, "line 1"},
		{"blank in array", "a[2]:\n  - 1\n\n  - 2", UnmarshalOptions{}, ErrSyntax, "line 3"},
		{"header", "a[2]x: 1", UnmarshalOptions{Lenient: true}, ErrSyntax, "line 1, column 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v any
			err := tt.opts.Unmarshal([]byte(tt.in), &v)
			if !errors.Is(err, tt.sentinel) {
				t.Fatalf("err = %v, want %v", err, tt.sentinel)
			}
			if !strings.Contains(err.Error(), "toon: "+tt.pos+":") {
				t.Errorf("err = %q, want position %q", err, tt.pos)
			}
		})
	}
}

func TestTypeErrors(t *testing.T) {
	var u api.User
	err := Unmarshal([]byte("id: abc"), &u)
	if !errors.Is(err, ErrType) || !strings.Contains(err.Error(), "line 1, column 5") {
		t.Fatalf("err = %v", err)
	}
	if err := Unmarshal([]byte("x: 1"), u); !errors.Is(err, ErrType) {
		t.Fatalf("non-pointer: %v", err)
	}
	if _, err := Marshal(map[string]any{"c": make(chan int)}); !errors.Is(err, ErrType) {
		t.Fatalf("chan: %v", err)
	}
}

// A declared length is never trusted for allocation: a lenient decode of a
// huge header with one row must not reserve the declared size.
func TestNoPreallocationFromHeader(t *testing.T) {
	var rows []struct{ A int }
	err := UnmarshalOptions{Lenient: true}.Unmarshal([]byte("[999999999]{A}:\n  1"), &rows)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || cap(rows) > preallocBytes {
		t.Fatalf("len %d cap %d", len(rows), cap(rows))
	}
	var anyRows any
	if err := (UnmarshalOptions{Lenient: true}).Unmarshal([]byte("[999999999]: 1,2"), &anyRows); err != nil {
		t.Fatal(err)
	}
	if a := anyRows.([]any); len(a) != 2 || cap(a) > preallocBytes {
		t.Fatalf("len %d cap %d", len(a), cap(a))
	}
	if err := Unmarshal([]byte("[999999999]{A}:\n  1"), &rows); !errors.Is(err, ErrCount) {
		t.Fatalf("strict: %v", err)
	}
}

func TestCyclicValue(t *testing.T) {
	type node struct {
		Next *node `toon:"next"`
	}
	n := &node{}
	n.Next = n
	if _, err := Marshal(n); !errors.Is(err, ErrDepth) {
		t.Fatalf("err = %v, want ErrDepth", err)
	}
}

func TestJSONConversion(t *testing.T) {
	in := `{"z":1,"a":[1.50,-0,12345678901234567890123,1e400],"m":{"k":"v","e":{}},"s":"x\u0001y"}`
	v, err := FromJSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	out, err := ToJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"z":1,"a":[1.5,0,1.2345678901234567890123e+22,1e+400],"m":{"k":"v","e":{}},"s":"x\u0001y"}`
	if string(out) != want {
		t.Fatalf("got %s, want %s", out, want)
	}
	tn, err := Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var back any
	if err := Unmarshal(tn, &back); err != nil {
		t.Fatal(err)
	}
	if !equalValues(back, v) {
		t.Fatalf("TOON round trip changed the value:\n%s", tn)
	}
}

func TestCanonicalNumbers(t *testing.T) {
	tests := map[string]string{
		"0": "0", "-0": "0", "-0.0e5": "0", "1.5000": "1.5", "-1E+03": "-1000", "1e21": "1e+21",
		"123456789012345678901": "123456789012345678901", "1e-6": "0.000001", "1e-7": "1e-7",
		"-1.25e-7": "-1.25e-7", "0.00012300": "0.000123", "1e99999999999999999999": "1e+99999999999999999999",
		"10e-1": "1", "1234.5e-2": "12.345",
	}
	for in, want := range tests {
		if got := canonicalNumber(in); string(got) != want {
			t.Errorf("canonicalNumber(%q) = %q, want %q", in, got, want)
		}
	}
	floats := map[float64]string{1e21: "1e+21", 1e-7: "1e-7", 0.1: "0.1", -5e-324: "-5e-324", 1.7976931348623157e308: "1.7976931348623157e+308", 123456789012345680000: "123456789012345680000"}
	for f, want := range floats {
		if got := string(appendFloat(nil, f, 64)); got != want {
			t.Errorf("appendFloat(%v) = %q, want %q", f, got, want)
		}
	}
}

// Decoding into a slice reuses its backing array like encoding/json, and
// must clear old elements; a growing slice must keep every row.
func TestDecodeReusesSlice(t *testing.T) {
	type r struct {
		A string `toon:"a"`
		B int    `toon:"b"`
	}
	v := []r{{"x", 1}, {"y", 2}, {"z", 3}}
	if err := Unmarshal([]byte("[2]{a}:\n  m\n  n"), &v); err != nil {
		t.Fatal(err)
	}
	if len(v) != 2 || v[0] != (r{"m", 0}) || v[1] != (r{"n", 0}) {
		t.Fatalf("reused slice: %+v", v)
	}
	var w []r
	doc := "[40]{a,b}:" + strings.Repeat("\n  s,7", 40)
	if err := Unmarshal([]byte(doc), &w); err != nil || len(w) != 40 || w[39] != (r{"s", 7}) || w[0] != (r{"s", 7}) {
		t.Fatalf("grown slice: %v %+v", err, w)
	}
}

// Marshal and Unmarshal share pooled scratch space and type caches; run
// them from several goroutines (meaningful under -race).
func TestConcurrentUse(t *testing.T) {
	l := sampleUsers(50)
	want, err := Marshal(&l)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			for range 50 {
				out, err := Marshal(&l)
				if err == nil && string(out) != string(want) {
					err = errors.New("concurrent Marshal produced different output")
				}
				var back api.UserList
				if err == nil {
					err = Unmarshal(out, &back)
				}
				if err == nil && !reflect.DeepEqual(back, l) {
					err = errors.New("concurrent Unmarshal produced a different value")
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
