package repl

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/kv"
)

func TestFrameRoundTrip(t *testing.T) {
	var b []byte
	b = appendFrame(b, KindRecord, 7, 1234, []byte("payload"))
	b = appendFrame(b, KindHeartbeat, 0, -5, nil)
	fr := newFrameReader(bytes.NewReader(b), MaxFrame)
	f, err := fr.next()
	if err != nil || f.Kind != KindRecord || f.Seq != 7 || f.TS != 1234 || string(f.Payload) != "payload" || f.Size != int64(frameHead+bodyHead+7) {
		t.Fatalf("first frame: %+v %v", f, err)
	}
	f, err = fr.next()
	if err != nil || f.Kind != KindHeartbeat || f.TS != -5 || len(f.Payload) != 0 {
		t.Fatalf("second frame: %+v %v", f, err)
	}
	if _, err := fr.next(); err != io.EOF {
		t.Fatalf("end: want io.EOF, got %v", err)
	}
}

func TestFrameErrors(t *testing.T) {
	good := appendFrame(nil, KindRecord, 1, 2, []byte("abc"))
	cases := map[string][]byte{
		"cut body":     good[:len(good)-1],
		"flipped byte": append(append([]byte{}, good[:len(good)-1]...), good[len(good)-1]^1),
		"short length": {1, 0, 0, 0, 0, 0, 0, 0, 'R'},
		"long length":  {0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0},
		"unknown kind": appendFrame(nil, 'X', 1, 2, nil),
	}
	for name, b := range cases {
		_, err := newFrameReader(bytes.NewReader(b), 1<<20).next()
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if name == "cut body" && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("cut body: want io.ErrUnexpectedEOF, got %v", err)
		}
		if name != "cut body" && !errors.Is(err, ErrFrame) {
			t.Errorf("%s: want ErrFrame, got %v", name, err)
		}
	}
	// The limit is exact: a frame of max bytes is read, one more is not.
	b := appendFrame(nil, KindRecord, 1, 2, make([]byte, 100))
	n := len(b) - frameHead
	if _, err := newFrameReader(bytes.NewReader(b), n).next(); err != nil {
		t.Fatalf("frame at the limit refused: %v", err)
	}
	if _, err := newFrameReader(bytes.NewReader(b), n-1).next(); !errors.Is(err, ErrFrame) {
		t.Fatalf("frame one past the limit: %v", err)
	}
}

func TestPosition(t *testing.T) {
	p := Position{ID: newID(), Offset: 123, Seq: 9}
	q, err := parsePosition(p.encode())
	if err != nil || q != p {
		t.Fatalf("round trip: %+v %v", q, err)
	}
	if q, err := parsePosition(nil); err != nil || q.ID != "" {
		t.Fatalf("empty: %+v %v", q, err)
	}
	for _, bad := range []string{"x 1 2", p.ID + " -1 2", p.ID + " 1", p.ID + " 1 2 3", p.ID[:39] + "g 1 2"} {
		if _, err := parsePosition([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzFrameReader: arbitrary bytes never panic, and a frame that is
// accepted re-encodes to the bytes it was read from.
func FuzzFrameReader(f *testing.F) {
	f.Add(appendFrame(nil, KindRecord, 1, 2, kv.AppendSetOp(nil, "k", []byte("v"), 0)))
	f.Add(appendFrame(nil, KindEnd, 3, 4, Position{ID: newID(), Offset: 5, Seq: 3}.encode()))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		fr := newFrameReader(bytes.NewReader(b), 1<<16)
		off := 0
		for {
			fm, err := fr.next()
			if err != nil {
				return
			}
			again := appendFrame(nil, fm.Kind, fm.Seq, fm.TS, fm.Payload)
			if !bytes.Equal(again, b[off:off+int(fm.Size)]) {
				t.Fatalf("frame at %d re-encodes differently", off)
			}
			off += int(fm.Size)
			if fm.Kind == KindEnd {
				parsePosition(fm.Payload) // must not panic
			}
		}
	})
}

func TestLeaderBacklog(t *testing.T) {
	l := NewLeader(200)
	id := l.Position().ID
	// Inactive (no follower yet): the store taps nothing, no stream.
	if l.Active() {
		t.Fatal("a new leader is active")
	}
	if _, _, _, ok := l.batch(id, 0, 1<<20); ok {
		t.Fatal("a stream before any snapshot")
	}
	start := l.markSnapshot().Offset
	if !l.Active() || start != 0 {
		t.Fatalf("after a snapshot: active %v at %d", l.Active(), start)
	}
	var offs []int64
	for i := range 10 {
		offs = append(offs, l.Position().Offset)
		l.Record(bytes.Repeat([]byte{'x'}, i+1))
	}
	// 200 bytes keep the last few records only.
	if s := l.BacklogStart(); s <= start || s > offs[9] {
		t.Fatalf("backlog start %d not trimmed from %d", s, start)
	}
	frames, next, _, ok := l.batch(id, offs[9], 1<<20)
	if !ok || len(frames) != 1 || next != l.Position().Offset {
		t.Fatalf("last record: %d frames, next %d, ok %v", len(frames), next, ok)
	}
	if _, _, _, ok := l.batch(id, offs[9]+1, 1<<20); ok {
		t.Fatal("an offset inside a record streamed")
	}
	if _, _, _, ok := l.batch(id, start, 1<<20); ok {
		t.Fatal("a trimmed offset streamed")
	}
	if _, _, _, ok := l.batch(newID(), offs[9], 1<<20); ok {
		t.Fatal("another history's ID streamed")
	}
	_, _, wake, ok := l.batch(id, l.Position().Offset, 1<<20)
	if !ok || wake == nil {
		t.Fatal("at the end: want a wake channel")
	}
	l.Record([]byte("y"))
	select {
	case <-wake:
	default:
		t.Fatal("a record did not wake the waiting stream")
	}
	l.Diverged()
	if p := l.Position(); p.ID == id || p.Offset != 0 || p.Seq != 0 {
		t.Fatalf("after Diverged: %+v", p)
	}
	if _, _, _, ok := l.batch(id, offs[9], 1<<20); ok {
		t.Fatal("the old history streams after Diverged")
	}
}

func TestFollowersLag(t *testing.T) {
	l := NewLeader(0)
	now := time.Unix(1000, 0)
	l.now = func() time.Time { return now }
	start := l.markSnapshot()
	l.Record([]byte("a"))
	now = now.Add(2 * time.Second)
	l.Record([]byte("b"))
	pos := l.Position()
	l.touch("f1", "127.0.0.1:1", pos.ID, func(f *followerState) { f.acked = start.Offset })
	l.touch("f2", "127.0.0.1:2", pos.ID, func(f *followerState) { f.acked = pos.Offset })
	l.touch("f3", "127.0.0.1:3", newID(), nil)
	now = now.Add(time.Second)
	fs := l.Followers()
	if len(fs) != 3 || fs[0].LagBytes != pos.Offset-start.Offset || fs[0].LagSeconds != 3 || fs[1].LagBytes != 0 || fs[1].LagSeconds != 0 || fs[2].LagSeconds != -1 {
		t.Fatalf("%+v", fs)
	}
	if !fs[0].Online {
		t.Fatal("a follower seen 1 s ago is offline")
	}
	now = now.Add(followerTTL)
	if l.Followers()[0].Online {
		t.Fatal("a follower silent for followerTTL is online")
	}
	m := string(l.Metrics())
	for _, want := range []string{`wirebench_kv_repl_follower_lag_seconds{follower="f1"} 8.000`, `wirebench_kv_repl_role{role="leader",replid="` + pos.ID + `"} 1`, "wirebench_kv_repl_followers 0"} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q:\n%s", want, m)
		}
	}
	if in := l.Info(); !strings.Contains(in, "master_repl_offset:"+strconv.FormatInt(pos.Offset, 10)) || !strings.Contains(in, "connected_slaves:0") {
		t.Errorf("INFO:\n%s", in)
	}
}

// FuzzParsePosition: any stored position either fails or re-encodes to
// one that parses the same (what a follower reads back from its AOF).
func FuzzParsePosition(f *testing.F) {
	f.Add([]byte(Position{ID: newID(), Offset: 5, Seq: 3}.encode()))
	f.Add([]byte("x 1 2"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := parsePosition(b)
		if err != nil {
			return
		}
		q, err := parsePosition(p.encode())
		if err != nil || q != p {
			t.Fatalf("%q: %+v, again %+v %v", b, p, q, err)
		}
	})
}

// FuzzParseSnapshotEnd: whatever parses re-encodes to a form that parses
// to the same end.
func FuzzParseSnapshotEnd(f *testing.F) {
	f.Add(snapshotEnd{Pos: Position{ID: newID(), Offset: 5, Seq: 2}, Frames: 3, Ops: 40, CRC: 0xdeadbeef}.encode())
	f.Add([]byte("x 1 2 3 4 5"))
	f.Add(Position{ID: newID(), Offset: 5, Seq: 2}.encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := parseSnapshotEnd(b)
		if err != nil {
			return
		}
		again, err := parseSnapshotEnd(e.encode())
		if err != nil || again != e {
			t.Fatalf("%q parsed to %+v, which re-parses to %+v, %v", b, e, again, err)
		}
	})
}
