package httpapi

import (
	"context"
	"encoding/json"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/wirebench/wirebench/store"
)

// niceRecords is a dataset whose list records the nice value of the
// thread that encodes it (JSON calls MarshalJSON while encoding).
type niceRecords struct{ nice atomic.Int64 }

func (r *niceRecords) List(string) (any, error) { return (*niceList)(r), nil }
func (r *niceRecords) Get(string, string) (any, error) {
	return nil, nil
}
func (r *niceRecords) Create([]byte, string, string) (any, error)      { return nil, nil }
func (r *niceRecords) Put(string, []byte, string, string) (any, error) { return nil, nil }
func (r *niceRecords) Delete(string) error                             { return nil }

type niceList niceRecords

func (l *niceList) MarshalJSON() ([]byte, error) {
	l.nice.Store(int64(threadNice()))
	return json.Marshal([]int{1, 2, 3})
}

// TestBigRepliesEncodedAtLowPriority: a big slot's reply (over HTTP/3, a
// route not known to be small) is encoded on a thread of nice lowNice,
// so the kernel runs a thread woken by the network before it; a reply in
// an ordinary slot, on the handler's own thread. Before, the big
// encodings ran at the priority of every other thread: on two CPUs under
// never-read streams the victim's p99 stayed at 2.7-5x its quiet one.
func TestBigRepliesEncodedAtLowPriority(t *testing.T) {
	runtime.LockOSThread() // the handler runs here: its nice is this thread's
	defer runtime.UnlockOSThread()
	base := int64(threadNice())
	recs := &niceRecords{}
	s, err := New(store.NewMemory(store.Options{}), Options{Records: recs})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		ctx  context.Context
		want int64
	}{
		{"HTTP/3", WithConnection(context.Background(), nil), max(base, lowNice)},
		{"net/http", WithTCPConnection(context.Background(), nil), base},
	} {
		recs.nice.Store(-1)
		s.routes["/records"].lastReply.Store(0) // its size unknown: a big reply
		var resp Response
		s.Handle(&Request{Method: "GET", Path: "/records", ContentLength: -1, Context: c.ctx}, &resp)
		if resp.Status != 200 || string(resp.Body) != "[1,2,3]" {
			t.Fatalf("%s: GET /records: %d %q", c.name, resp.Status, resp.Body)
		}
		resp.Release()
		if got := recs.nice.Load(); got != c.want {
			t.Errorf("%s: the list was encoded at nice %d, want %d", c.name, got, c.want)
		}
	}
}
