package repl

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirebench/wirebench/kv"
)

// followerStore is a replica's durable store holding had keys at a
// position of another history (so the follower must resync).
func followerStore(t *testing.T, dir string, had int) (*kv.Store, Position) {
	t.Helper()
	st, err := kv.Open(kv.Options{Dir: dir, Replica: true})
	if err != nil {
		t.Fatal(err)
	}
	pos := Position{ID: newID(), Offset: 1234, Seq: 56}
	var p []byte
	for i := range had {
		p = kv.AppendSetOp(p, fmt.Sprintf("old:%05d", i), []byte("old value"), 0)
		if len(p) > 32<<10 || i == had-1 {
			tk, err := st.Apply(p, pos.encode())
			if err == nil {
				err = st.Wait(tk)
			}
			if err != nil {
				t.Fatal(err)
			}
			p = nil
		}
	}
	return st, pos
}

// cutPoints are where a snapshot body is cut: at and around every frame
// boundary (mid-header included) and in the middle of every frame.
func cutPoints(body []byte) []int {
	seen := map[int]bool{}
	var cuts []int
	prev := 0
	for _, end := range frameEnds(body) {
		for _, c := range []int{prev, prev + 1, prev + 4, prev + 8, prev + 9, (prev + end) / 2, end - 1} {
			if c >= 0 && c < len(body) && !seen[c] {
				seen[c] = true
				cuts = append(cuts, c)
			}
		}
		prev = end
	}
	return cuts
}

// tampered are whole-looking snapshot bodies that are not the snapshot:
// a frame missing (renumbered, so only the end frame's counts catch it),
// a frame missing as sent, frames swapped, an extra frame, an end frame
// with a wrong count, and an end frame of the old three-field form.
func tampered(t *testing.T, body []byte) map[string][]byte {
	t.Helper()
	type fr struct {
		seq     uint64
		kind    byte
		payload []byte
	}
	var frs []fr
	r := newFrameReader(bytes.NewReader(body), MaxFrame)
	for {
		f, err := r.next()
		if err != nil {
			break
		}
		frs = append(frs, fr{f.Seq, f.Kind, append([]byte(nil), f.Payload...)})
	}
	if len(frs) < 5 || frs[len(frs)-1].kind != KindEnd {
		t.Fatalf("snapshot of %d frames: want several and an end", len(frs))
	}
	enc := func(list []fr, renumber bool) []byte {
		var b []byte
		for i, f := range list {
			seq := f.seq
			if renumber && f.kind == KindSnapshot {
				seq = uint64(i + 1)
			}
			b = appendFrame(b, f.kind, seq, 0, f.payload)
		}
		return b
	}
	last := len(frs) - 1
	end, err := parseSnapshotEnd(frs[last].payload)
	if err != nil {
		t.Fatal(err)
	}
	drop := append(append([]fr(nil), frs[:2]...), frs[3:]...)
	swapped := append([]fr(nil), frs...)
	swapped[1], swapped[2] = swapped[2], swapped[1]
	extra := append(append([]fr(nil), frs[:last]...), fr{0, KindSnapshot, kv.AppendSetOp(nil, "extra", []byte("x"), 0)}, frs[last])
	wrong := append([]fr(nil), frs...)
	e2 := end
	e2.Ops++
	wrong[last] = fr{wrong[last].seq, KindEnd, e2.encode()}
	old := append([]fr(nil), frs...)
	old[last] = fr{old[last].seq, KindEnd, end.Pos.encode()}
	return map[string][]byte{
		"frame missing, renumbered": enc(drop, true),
		"frame missing":             enc(drop, false),
		"frames swapped":            enc(swapped, false),
		"frames swapped, renumber":  enc(swapped, true),
		"extra frame":               enc(extra, true),
		"end with a wrong count":    enc(wrong, false),
		"end without counts":        enc(old, false),
	}
}

// TestCutSnapshotKeepsData is issue 34's fake-leader reproduction: a
// follower holding 5,001 keys is sent the leader's snapshot cut at every
// frame boundary and around it, and tampered whole-looking bodies, then
// the real one. Throughout (a sampler reads the key count without pause)
// and after every failed attempt it must still serve its 5,001 keys at
// its old position with its AOF byte for byte; after the good snapshot
// it must hold exactly the leader's keys, and so must its AOF.
// (Before the fix, the first cut left it with a few keys.)
func TestCutSnapshotKeepsData(t *testing.T) {
	const had = 5001
	lst, _, body := leaderStore(t, 6000, 16<<10) // more keys than the follower: its count only grows
	cuts := cutPoints(body)
	bad := tampered(t, body)
	var badNames []string
	for name := range bad {
		badNames = append(badNames, name)
	}
	dir := t.TempDir()
	st, oldPos := followerStore(t, dir, had)
	aofPath := filepath.Join(dir, kv.AOFName)
	aofBefore, err := os.ReadFile(aofPath)
	if err != nil {
		t.Fatal(err)
	}
	ends := frameEnds(body)
	e, err := parseSnapshotEnd(body[ends[len(ends)-2]+frameHead+bodyHead:])
	if err != nil {
		t.Fatal(err)
	}
	snapPos := e.Pos
	fl := &fakeLeader{
		snapshot: func(w http.ResponseWriter, r *http.Request, n int) {
			switch {
			case n < len(cuts):
				serveBody(w, body[:cuts[n]], n%2 == 1)
			case n < len(cuts)+len(badNames):
				serveBody(w, bad[badNames[n-len(cuts)]], false)
			default:
				serveBody(w, body, false)
			}
		},
		stream: func(w http.ResponseWriter, r *http.Request, n int) {
			if r.URL.Query().Get("id") != snapPos.ID {
				conflict(w, r, n)
				return
			}
			streamFrom(w, r, nil)
		},
	}
	srv := httptest.NewServer(fl)
	defer srv.Close()
	var violations []string
	checks := 0
	clk := newFakeClock(func(int, time.Duration) bool { return false })
	clk.onSleep = func() { // between attempts: the follower is quiet
		checks++
		a, _ := os.ReadFile(aofPath)
		_, swapErr := os.Stat(filepath.Join(dir, kv.SwapName))
		if n := st.Len(); n != had || !bytes.Equal(a, aofBefore) || string(st.Meta()) != string(oldPos.encode()) || !errors.Is(swapErr, os.ErrNotExist) {
			if len(violations) < 5 {
				s, _ := fl.counts()
				violations = append(violations, fmt.Sprintf("after snapshot %d: %d keys, AOF %d bytes (was %d), meta %q, swap file: %v", s, n, len(a), len(aofBefore), st.Meta(), swapErr))
			}
		}
	}
	var minKeys atomic.Int64
	minKeys.Store(had)
	stopSampling := make(chan struct{})
	sampled := make(chan int)
	go func() { // the count readers see, sampled without pause until the good snapshot
		n := 0
		for {
			select {
			case <-stopSampling:
				sampled <- n
				return
			default:
			}
			if k := int64(st.Len()); k < minKeys.Load() {
				minKeys.Store(k)
			}
			n++
		}
	}()
	synced := make(chan Position, 1)
	f, err := StartFollower(st, FollowerOptions{Leader: srv.URL, Now: clk.Now, Sleep: clk.Sleep, IdleTimeout: 30 * time.Second,
		OnApply: func(p Position, snap bool) {
			if snap {
				close(stopSampling)
				synced <- p
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	var pos Position
	select {
	case pos = <-synced:
	case <-time.After(120 * time.Second):
		f.Close()
		t.Fatalf("no good resync in 120 s; %d checks; violations %v", checks, violations)
	}
	f.Close()
	samples := <-sampled
	snaps, _ := fl.counts()
	t.Logf("%d cut and %d tampered snapshots, then the whole one: %d checks between attempts, %d samples, fewest keys served %d (had %d)",
		len(cuts), len(bad), checks, samples, minKeys.Load(), had)
	if snaps != len(cuts)+len(bad)+1 || checks < len(cuts)+len(bad) || samples == 0 {
		t.Fatalf("%d snapshot requests, %d checks, %d samples: the attempts did not all run", snaps, checks, samples)
	}
	if len(violations) > 0 || minKeys.Load() < had {
		t.Fatalf("a cut or bad snapshot changed the follower (fewest keys served %d of %d): %v", minKeys.Load(), had, violations)
	}
	if pos != snapPos {
		t.Fatalf("synced at %+v, want %+v", pos, snapPos)
	}
	sameAs := func(when string, st *kv.Store) {
		t.Helper()
		if st.Len() != lst.Len() {
			t.Fatalf("%s: %d keys, leader %d", when, st.Len(), lst.Len())
		}
		lst.Keys(func(k string) bool {
			lv, _, _ := lst.Get(k)
			if v, _, ok := st.Get(k); !ok || !bytes.Equal(v, lv) {
				t.Fatalf("%s: key %s = %q, leader %q", when, k, v, lv)
			}
			return true
		})
		if string(st.Meta()) != string(pos.encode()) {
			t.Fatalf("%s: meta %q, want %q", when, st.Meta(), pos.encode())
		}
	}
	sameAs("after the resync", st)
	st.Close()
	st, err = kv.Open(kv.Options{Dir: dir, Replica: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sameAs("reopened from the AOF", st)
}

// FuzzLoadSnapshot: any body either loads a snapshot whose end frame
// matches what was loaded, or fails; never a panic, never a success
// with counts that differ.
func FuzzLoadSnapshot(f *testing.F) {
	pos := Position{ID: newID(), Offset: 10, Seq: 2}
	p1 := kv.AppendSetOp(nil, "a", []byte("1"), 0)
	p2 := kv.AppendSetOp(kv.AppendSetOp(nil, "b", []byte("2"), 5), "c", nil, 0)
	var crc uint32
	body := appendFrame(nil, KindSnapshot, 1, 0, p1)
	body = appendFrame(body, KindSnapshot, 2, 0, p2)
	crc = crcOf(p1, p2)
	whole := appendFrame(body, KindEnd, 3, 0, snapshotEnd{Pos: pos, Frames: 2, Ops: 3, CRC: crc}.encode())
	f.Add(whole)
	f.Add(whole[:len(whole)-3])
	f.Add(appendFrame(nil, KindEnd, 1, 0, snapshotEnd{Pos: pos}.encode()))
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0}) // a hostile length alone
	st, err := kv.Open(kv.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		rep, err := st.NewReplacement()
		if err != nil {
			t.Fatal(err)
		}
		defer rep.Abort()
		end, err := loadSnapshot(bytes.NewReader(b), rep, func() {})
		if err != nil {
			return
		}
		if end.Ops != rep.Ops() || end.Pos.ID == "" {
			t.Fatalf("loaded %d ops, end says %d (%+v)", rep.Ops(), end.Ops, end)
		}
	})
}

func crcOf(ps ...[]byte) uint32 {
	var c uint32
	for _, p := range ps {
		c = crc32.Update(c, castagnoli, p)
	}
	return c
}

// TestRedirectNotFollowed: a leader that redirects (to a second listener)
// gets no second request: the token never reaches the other server, and
// the error names the Location.
func TestRedirectNotFollowed(t *testing.T) {
	var other atomic.Int64
	var sawToken atomic.Bool
	second := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		other.Add(1)
		if r.Header.Get("Authorization") != "" {
			sawToken.Store(true)
		}
		http.Error(w, "second", http.StatusTeapot)
	}))
	defer second.Close()
	leader := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, second.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	defer leader.Close()
	for _, withPos := range []bool{false, true} { // the snapshot, then the stream
		st, err := kv.Open(kv.Options{Replica: true})
		if err != nil {
			t.Fatal(err)
		}
		if withPos {
			st.Apply(nil, Position{ID: newID(), Offset: 1, Seq: 1}.encode())
		}
		clk := newFakeClock(func(n int, _ time.Duration) bool { return n >= 3 })
		f, err := StartFollower(st, FollowerOptions{Leader: leader.URL, Token: "s3cret", Now: clk.Now, Sleep: clk.Sleep})
		if err != nil {
			t.Fatal(err)
		}
		clk.wait(t)
		f.Close()
		s := f.Status()
		st.Close()
		if !bytes.Contains([]byte(s.LastError), []byte("redirects are not followed")) || !bytes.Contains([]byte(s.LastError), []byte(second.URL)) {
			t.Fatalf("last error %q: want the refusal naming %s", s.LastError, second.URL)
		}
	}
	if other.Load() != 0 || sawToken.Load() {
		t.Fatalf("the redirect target got %d requests (token seen: %v)", other.Load(), sawToken.Load())
	}
}
