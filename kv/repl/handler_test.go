package repl

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirebench/wirebench/kv"
)

func TestHandlerLimits(t *testing.T) {
	st, err := kv.Open(kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	l := NewLeader(0)
	h := l.Handler(st)
	ack := func(name string) int {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("POST", pathAck+"?offset=0&id=x&name="+name, nil))
		return w.Code
	}
	if c := ack(strings.Repeat("n", maxNameLen)); c != http.StatusNoContent {
		t.Fatalf("a name of %d bytes: %d", maxNameLen, c)
	}
	if c := ack(strings.Repeat("n", maxNameLen+1)); c != http.StatusBadRequest {
		t.Fatalf("a name of %d bytes: %d", maxNameLen+1, c)
	}
	for i := 1; i < maxFollowers; i++ {
		if c := ack("f" + strconv.Itoa(i)); c != http.StatusNoContent {
			t.Fatalf("follower %d: %d", i, c)
		}
	}
	if c := ack("one-too-many"); c != http.StatusServiceUnavailable {
		t.Fatalf("follower %d: %d", maxFollowers+1, c)
	}
	if c := ack("f1"); c != http.StatusNoContent {
		t.Fatalf("a known follower refused when the table is full: %d", c)
	}
	for _, q := range []string{"offset=-1", "offset=x", ""} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", pathStream+"?"+q, nil))
		if w.Code != http.StatusBadRequest {
			t.Errorf("stream?%s: %d", q, w.Code)
		}
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", pathStream+"?id=x&offset=0", nil))
	if w.Code != http.StatusConflict || !strings.Contains(w.Body.String(), l.Position().ID) {
		t.Errorf("stream of another history: %d %s", w.Code, w.Body)
	}
}

// TestFollowerIdleTimeout: a leader that accepts the stream and then
// says nothing loses it after IdleTimeout, and the follower asks again.
func TestFollowerIdleTimeout(t *testing.T) {
	var streams atomic.Int64
	pos := Position{ID: newID()}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case pathSnapshot:
			w.Write(appendFrame(nil, KindEnd, 1, 0, snapshotEnd{Pos: pos}.encode()))
		case pathStream:
			streams.Add(1)
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done() // silent
		}
	}))
	defer srv.Close()
	st, err := kv.Open(kv.Options{Replica: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// 150 ms idle timeout, a few of them in 3 s even on a slow box.
	f, err := StartFollower(st, FollowerOptions{Leader: srv.URL, IdleTimeout: 150 * time.Millisecond, MaxBackoff: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	deadline := time.Now().Add(3 * time.Second)
	for streams.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d streams in 3 s: a silent stream is not dropped", streams.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if s := f.Status(); s.Resyncs != 1 || s.Pos != pos || s.Reconnects < 2 || !strings.Contains(s.LastError, "no frame for") {
		t.Fatalf("status %+v", s)
	}
}
