package httpapi

import (
	"testing"

	"github.com/wirebench/wirebench/store"
)

// stubRecords is a Records that holds nothing: enough to mount the
// /records routes.
type stubRecords struct{}

func (stubRecords) List(string) (any, error)                        { return nil, nil }
func (stubRecords) Get(string, string) (any, error)                 { return nil, nil }
func (stubRecords) Create([]byte, string, string) (any, error)      { return nil, nil }
func (stubRecords) Put(string, []byte, string, string) (any, error) { return nil, nil }
func (stubRecords) Delete(string) error                             { return nil }

// TestMatchFindsEveryRoute: match (route fields, not map lookups) finds
// each pattern's route, and a route's handler by method index is its
// method map's, for every method (HEAD, added to GET routes, too), with
// and without records.
func TestMatchFindsEveryRoute(t *testing.T) {
	for _, recs := range []Records{nil, stubRecords{}} {
		s, err := New(store.NewMemory(store.Options{}), Options{Records: recs})
		if err != nil {
			t.Fatal(err)
		}
		paths := map[string]string{
			"/users": "/users", "/users/{id}": "/users/7", "/todos": "/todos", "/todos/{id}": "/todos/x",
			"/echo": "/echo", "/records": "/records", "/records/{key}": "/records/k", "/": "/nope",
		}
		checked := 0
		for pattern, rt := range s.routes {
			rt2, _ := s.match(paths[pattern])
			if rt2 != rt {
				t.Errorf("records %v: match(%q) is %q's route, want %q's", recs != nil, paths[pattern], rt2.pattern, pattern)
			}
			for _, m := range []string{"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "get", ""} {
				_, has := rt.methods[m]
				if got := rt.handler(m) != nil; got != has {
					t.Errorf("records %v: %s %s: handler found %v, the method map says %v", recs != nil, m, pattern, got, has)
				}
				checked++
			}
		}
		want := 6 // the records' two routes are mounted only with records
		if recs != nil {
			want = 8
		}
		if len(s.routes) != want {
			t.Errorf("records %v: %d routes, want %d", recs != nil, len(s.routes), want)
		}
		if checked == 0 {
			t.Fatal("no route checked")
		}
		if rt, _ := s.match("/records"); recs == nil && rt != s.routes["/"] {
			t.Errorf("without records, /records is %q's route", rt.pattern)
		}
	}
}
