package toon

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	gojson "github.com/goccy/go-json"
	"google.golang.org/protobuf/proto"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/pb"
)

// Benchmarks compare TOON with encoding/json, goccy/go-json and protobuf
// on the API's shapes. Sub-benchmark names are key=value pairs, so one run
// can be compared column-wise:
//
//	go test -run '^$' -bench . -benchmem -count 6 ./toon > bench.txt
//	benchstat -col /codec bench.txt
//
// Protobuf encodes the generated pb messages (converted once, outside the
// timed loop); it has no airport message.

func benchTodos(n int) api.TodoList {
	r := rand.New(rand.NewPCG(1, 2))
	l := api.TodoList{Todos: make([]api.Todo, n)}
	texts := []string{"Write the TOON codec", "Review the benchmark, fairly", "Buy milk", "Call Ada about the: schema"}
	for i := range l.Todos {
		l.Todos[i] = api.Todo{
			ID:   fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", r.Uint32(), r.Uint32()&0xffff, r.Uint32()&0xfff, 0x8000|r.Uint32()&0x3fff, r.Uint64()&0xffffffffffff),
			Text: texts[i%len(texts)],
			Done: i%3 == 0,
		}
	}
	return l
}

func benchAirports(n int) airportList {
	l := airportList{Airports: make([]airport, n)}
	for i := range l.Airports {
		l.Airports[i] = makeAirport(i)
	}
	return l
}

// benchShape is one dataset: a value, a constructor for a fresh decode
// target, and its protobuf form where there is one.
type benchShape struct {
	name   string
	value  any
	target func() any
	pbMsg  proto.Message
	pbNew  func() proto.Message
}

func benchShapes() []benchShape {
	u1 := sampleUsers(1).Users[0]
	u100, u10k := sampleUsers(100), sampleUsers(10_000)
	t100 := benchTodos(100)
	a10k := benchAirports(10_000)
	return []benchShape{
		{"user1", &u1, func() any { return new(api.User) }, pb.FromUser(&u1), func() proto.Message { return new(pb.User) }},
		{"users100", &u100, func() any { return new(api.UserList) }, pb.FromUserList(&u100), func() proto.Message { return new(pb.UserList) }},
		{"users10k", &u10k, func() any { return new(api.UserList) }, pb.FromUserList(&u10k), func() proto.Message { return new(pb.UserList) }},
		{"todos100", &t100, func() any { return new(api.TodoList) }, pb.FromTodoList(&t100), func() proto.Message { return new(pb.TodoList) }},
		{"airports10k", &a10k, func() any { return new(airportList) }, nil, nil},
	}
}

type benchCodec struct {
	name      string
	marshal   func(any) ([]byte, error)
	unmarshal func([]byte, any) error
}

var benchCodecs = []benchCodec{
	{"toon", Marshal, Unmarshal},
	{"json", json.Marshal, json.Unmarshal},
	{"gojson", gojson.Marshal, gojson.Unmarshal},
}

func BenchmarkMarshal(b *testing.B) {
	for _, s := range benchShapes() {
		for _, c := range benchCodecs {
			b.Run(fmt.Sprintf("shape=%s/codec=%s", s.name, c.name), func(b *testing.B) {
				var out []byte
				var err error
				b.ReportAllocs()
				for b.Loop() {
					if out, err = c.marshal(s.value); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(len(out)), "bytes")
			})
		}
		if s.pbMsg != nil {
			b.Run(fmt.Sprintf("shape=%s/codec=protobuf", s.name), func(b *testing.B) {
				var out []byte
				var err error
				b.ReportAllocs()
				for b.Loop() {
					if out, err = proto.Marshal(s.pbMsg); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(len(out)), "bytes")
			})
		}
	}
}

func BenchmarkUnmarshal(b *testing.B) {
	for _, s := range benchShapes() {
		for _, c := range benchCodecs {
			data, err := c.marshal(s.value)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("shape=%s/codec=%s", s.name, c.name), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					if err := c.unmarshal(data, s.target()); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(len(data)), "bytes")
			})
		}
		if s.pbMsg != nil {
			data, err := proto.Marshal(s.pbMsg)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("shape=%s/codec=protobuf", s.name), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					if err := proto.Unmarshal(data, s.pbNew()); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(len(data)), "bytes")
			})
		}
	}
}
