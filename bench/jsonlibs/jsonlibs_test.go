// Package jsonlibs measures candidate fast JSON libraries on wirebench's own
// payloads, to choose the one behind --json-lib fast. It is a separate module
// so that the losing candidates do not become dependencies of wirebench.
//
//	cd bench/jsonlibs && go test -bench . -benchmem -count 6 | tee out.txt && benchstat -col /lib out.txt
package jsonlibs

import (
	stdjson "encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/bytedance/sonic"
	gojson "github.com/goccy/go-json"

	"github.com/wirebench/wirebench/api"
)

type lib struct {
	name      string
	marshal   func(any) ([]byte, error)
	unmarshal func([]byte, any) error
}

var libs = []lib{
	{"std", stdjson.Marshal, stdjson.Unmarshal},
	{"goccy", gojson.Marshal, gojson.Unmarshal},
	{"sonic", sonic.ConfigStd.Marshal, sonic.ConfigStd.Unmarshal},
}

func users(n int) *api.UserList {
	base := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)
	l := &api.UserList{Users: make([]api.User, n)}
	for i := range l.Users {
		l.Users[i] = api.User{ID: int64(i + 1), Name: fmt.Sprintf("User Number %d", i+1),
			Email: fmt.Sprintf("user%d@example.com", i+1), CreatedAt: base.Add(time.Duration(i) * 1234567 * time.Nanosecond)}
	}
	return l
}

func BenchmarkJSON(b *testing.B) {
	payloads := []struct {
		name string
		v    any
		new  func() any
	}{
		{"echo", &api.EchoRequest{FirstMessage: "Hello, ", SecondMessage: "World!"}, func() any { return new(api.EchoRequest) }},
		{"user", &users(1).Users[0], func() any { return new(api.User) }},
		{"users100", users(100), func() any { return new(api.UserList) }},
	}
	for _, p := range payloads {
		data, _ := stdjson.Marshal(p.v)
		for _, l := range libs {
			b.Run(fmt.Sprintf("op=marshal/payload=%s/lib=%s", p.name, l.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := l.marshal(p.v); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(fmt.Sprintf("op=unmarshal/payload=%s/lib=%s", p.name, l.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := l.unmarshal(data, p.new()); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
