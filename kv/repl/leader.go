package repl

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultBacklog is the leader's backlog in bytes (Redis's
// repl-backlog-size is 1 MiB; ours is larger because a follower's full
// resync copies the whole store).
const DefaultBacklog = 64 << 20

// rec is one record's frame in the backlog.
type rec struct {
	off   int64
	frame []byte
}

// Leader is a kv.Tap: it numbers the store's changes, keeps the last
// Backlog bytes of their frames for followers to stream, and tracks the
// followers. Its methods are safe for concurrent use.
type Leader struct {
	mu      sync.Mutex
	id      string
	off     int64  // end of the history's stream
	seq     uint64 // last record's number
	recs    []rec  // backlog: recs[head:]
	head    int
	bytes   int64
	limit   int64
	wake    chan struct{} // closed at the next record when someone waits
	waiting bool
	// active: a follower has taken a snapshot, so the history is kept
	// (as Redis creates its backlog when the first replica attaches);
	// before, the store does not even tap (Active) and the offset stays.
	active atomic.Bool
	foll   map[string]*followerState
	now    func() time.Time
	closed chan struct{} // closed by Close: streams end
	once   sync.Once
}

// Close ends every stream (followers reconnect to whoever serves next).
func (l *Leader) Close() { l.once.Do(func() { close(l.closed) }) }

type followerState struct {
	name, addr string
	id         string
	acked      int64 // offset the follower reported
	sent       int64 // offset sent on its open stream
	streams    int
	lastSeen   time.Time
}

// NewLeader returns a leader with a fresh replication ID; backlog <= 0 is
// DefaultBacklog.
func NewLeader(backlog int64) *Leader {
	if backlog <= 0 {
		backlog = DefaultBacklog
	}
	return &Leader{id: newID(), limit: backlog, wake: make(chan struct{}), foll: map[string]*followerState{}, now: time.Now, closed: make(chan struct{})}
}

func newID() string {
	var b [IDLen / 2]byte
	rand.Read(b[:]) // never fails (crypto/rand's contract since Go 1.24)
	return hex.EncodeToString(b[:])
}

// Record implements kv.Tap.
func (l *Leader) Record(payload []byte) {
	l.mu.Lock()
	l.seq++
	fr := appendFrame(make([]byte, 0, frameHead+bodyHead+len(payload)), KindRecord, l.seq, l.now().UnixMilli(), payload)
	l.recs = append(l.recs, rec{l.off, fr})
	l.off += int64(len(fr))
	l.bytes += int64(len(fr))
	for l.bytes > l.limit && len(l.recs)-l.head > 1 {
		l.bytes -= int64(len(l.recs[l.head].frame))
		l.recs[l.head] = rec{}
		l.head++
	}
	if l.head > 1024 && l.head > len(l.recs)/2 {
		l.recs = append(l.recs[:0:0], l.recs[l.head:]...)
		l.head = 0
	}
	l.notifyLocked()
	l.mu.Unlock()
}

// Active implements kv.Tap.
func (l *Leader) Active() bool { return l.active.Load() }

// Diverged implements kv.Tap: the store undid changes already streamed,
// so this history ends; followers resync into a new one.
func (l *Leader) Diverged() {
	l.mu.Lock()
	l.id, l.off, l.seq = newID(), 0, 0
	clear(l.recs)
	l.recs, l.head, l.bytes = l.recs[:0], 0, 0
	l.notifyLocked()
	l.mu.Unlock()
}

func (l *Leader) notifyLocked() {
	if l.waiting {
		close(l.wake)
		l.wake, l.waiting = make(chan struct{}), false
	}
}

// Position is the leader's end of history.
func (l *Leader) Position() Position {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Position{ID: l.id, Offset: l.off, Seq: l.seq}
}

// markSnapshot is Position for a snapshot: from now on the backlog keeps
// records, so the follower can stream from the snapshot's position.
func (l *Leader) markSnapshot() Position {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.active.Store(true)
	return Position{ID: l.id, Offset: l.off, Seq: l.seq}
}

// BacklogStart is the offset of the oldest record still in the backlog.
func (l *Leader) BacklogStart() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.startLocked()
}

func (l *Leader) startLocked() int64 {
	if l.head < len(l.recs) {
		return l.recs[l.head].off
	}
	return l.off
}

// indexLocked finds the backlog record at off: i == len(recs) when off is
// the end; ok false when off is not a record boundary of the backlog.
func (l *Leader) indexLocked(off int64) (int, bool) {
	if off == l.off {
		return len(l.recs), true
	}
	if off < l.startLocked() || off > l.off {
		return 0, false
	}
	rs := l.recs[l.head:]
	i := sort.Search(len(rs), func(i int) bool { return rs[i].off >= off })
	if i == len(rs) || rs[i].off != off {
		return 0, false
	}
	return l.head + i, true
}

// batch returns frames from off (at most max bytes, at least one frame),
// the offset after them, and whether the stream may go on: false when
// the history changed or off left the backlog. With nothing to send it
// returns the channel that is closed at the next record.
func (l *Leader) batch(id string, off int64, max int) (frames [][]byte, next int64, wake <-chan struct{}, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if id != l.id || !l.active.Load() { // streams follow a snapshot
		return nil, off, nil, false
	}
	i, ok := l.indexLocked(off)
	if !ok {
		return nil, off, nil, false
	}
	n := 0
	for ; i < len(l.recs) && (n == 0 || n+len(l.recs[i].frame) <= max); i++ {
		frames = append(frames, l.recs[i].frame)
		n += len(l.recs[i].frame)
		off += int64(len(l.recs[i].frame))
	}
	if len(frames) == 0 {
		l.waiting = true
		wake = l.wake
	}
	return frames, off, wake, true
}

// FollowerInfo is what the leader knows of one follower.
type FollowerInfo struct {
	Name     string `json:"name"`
	Addr     string `json:"addr"`
	ID       string `json:"replid"`
	Acked    int64  `json:"acked_offset"`
	Sent     int64  `json:"sent_offset"`
	Streams  int    `json:"streams"`
	LagBytes int64  `json:"lag_bytes"`
	// LagSeconds is the age of the oldest record the follower has not
	// acknowledged (0 when it has them all; -1 when that record left
	// the backlog or the follower is in another history).
	LagSeconds float64   `json:"lag_seconds"`
	LastSeen   time.Time `json:"last_seen"`
	Online     bool      `json:"online"`
}

// followerTTL: a follower neither streaming nor acking for this long is
// listed offline, and forgotten after forgetAfter.
const (
	followerTTL = 5 * time.Second
	forgetAfter = 10 * time.Minute
	// maxFollowers bounds the table (names come from requests).
	maxFollowers = 1024
)

// touch records what a follower reported or was sent; it returns false
// when the table is full of other followers.
func (l *Leader) touch(name, addr, id string, update func(*followerState)) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	f := l.foll[name]
	if f == nil {
		for k, o := range l.foll {
			if o.streams == 0 && now.Sub(o.lastSeen) > forgetAfter {
				delete(l.foll, k)
			}
		}
		if len(l.foll) >= maxFollowers {
			return false
		}
		f = &followerState{name: name}
		l.foll[name] = f
	}
	f.addr, f.id, f.lastSeen = addr, id, now
	if update != nil {
		update(f)
	}
	return true
}

// Followers lists the followers by name.
func (l *Leader) Followers() []FollowerInfo {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	out := make([]FollowerInfo, 0, len(l.foll))
	for _, f := range l.foll {
		fi := FollowerInfo{Name: f.name, Addr: f.addr, ID: f.id, Acked: f.acked, Sent: f.sent, Streams: f.streams, LastSeen: f.lastSeen,
			Online: f.streams > 0 || now.Sub(f.lastSeen) < followerTTL}
		fi.LagSeconds = -1
		if f.id == l.id {
			fi.LagBytes = l.off - f.acked
			if i, ok := l.indexLocked(f.acked); ok {
				fi.LagSeconds = 0
				if i < len(l.recs) {
					ts := int64(binary.LittleEndian.Uint64(l.recs[i].frame[frameHead+9:]))
					fi.LagSeconds = max(float64(now.UnixMilli()-ts)/1000, 0)
				}
			}
		} else {
			fi.LagBytes = l.off // another history: all of this one is missing
		}
		out = append(out, fi)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
