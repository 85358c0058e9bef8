package jsonlibs

import (
	stdjson "encoding/json"
	"reflect"
	"testing"

	"github.com/wirebench/wirebench/api"
)

// TestLibrariesAgree: a benchmark between libraries is fair only if they do
// the same work, so each candidate must read every payload as encoding/json
// writes it and write it so that encoding/json reads the same value back,
// timestamps to the nanosecond.
func TestLibrariesAgree(t *testing.T) {
	payloads := []struct {
		name string
		v    any
		new  func() any
	}{
		{"echo", &api.EchoRequest{FirstMessage: "Hello, ", SecondMessage: "Wörld! \u2028 <&>"}, func() any { return new(api.EchoRequest) }},
		{"user", &users(1).Users[0], func() any { return new(api.User) }},
		{"users100", users(100), func() any { return new(api.UserList) }},
	}
	checked := 0
	for _, p := range payloads {
		std, err := stdjson.Marshal(p.v)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range libs {
			got := p.new()
			if err := l.unmarshal(std, got); err != nil || !reflect.DeepEqual(normalize(got), normalize(p.v)) {
				t.Errorf("%s reads %s as %+v (%v)", l.name, p.name, got, err)
			}
			out, err := l.marshal(p.v)
			if err != nil {
				t.Fatalf("%s marshal %s: %v", l.name, p.name, err)
			}
			back := p.new()
			if err := stdjson.Unmarshal(out, back); err != nil || !reflect.DeepEqual(normalize(back), normalize(p.v)) {
				t.Errorf("%s writes %s as %s (%v)", l.name, p.name, out, err)
			}
			checked++
		}
	}
	if checked != len(payloads)*len(libs) || len(libs) != 3 {
		t.Fatalf("checked %d pairs", checked)
	}
}

// normalize makes times comparable with DeepEqual (UTC, no monotonic
// reading).
func normalize(v any) any {
	switch v := v.(type) {
	case *api.User:
		u := *v
		u.CreatedAt = u.CreatedAt.UTC()
		return u
	case *api.UserList:
		out := make([]api.User, len(v.Users))
		for i := range v.Users {
			out[i] = normalize(&v.Users[i]).(api.User)
		}
		return out
	}
	return v
}
