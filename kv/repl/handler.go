package repl

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"net/http"
	"strconv"
	"time"

	"github.com/wirebench/wirebench/kv"
)

// The leader's HTTP routes (under the KV routes, so they share their
// access control):
//
//	GET  /kv/_repl/stream?id=ID&offset=N&name=NAME   frames from N; 409 when
//	     ID is not the leader's or N is not in its backlog (resync)
//	GET  /kv/_repl/snapshot                          'S' frames then 'E'
//	POST /kv/_repl/ack?id=ID&offset=N&name=NAME      the follower's position
//	GET  /kv/_repl/followers                         JSON list
const (
	PathPrefix    = "/kv/_repl/"
	pathStream    = PathPrefix + "stream"
	pathSnapshot  = PathPrefix + "snapshot"
	pathAck       = PathPrefix + "ack"
	pathFollowers = PathPrefix + "followers"
	// ContentType of the stream and snapshot bodies.
	ContentType = "application/x-wirebench-repl"
	// HeartbeatEvery is how often an idle stream carries the leader's
	// offset; followers give up on a stream silent for IdleTimeout.
	HeartbeatEvery = time.Second
	// writeTimeout bounds one write to a follower: one that stops
	// reading loses its stream (it reconnects, or resyncs).
	writeTimeout = 30 * time.Second
	// batchBytes is the most sent between two looks at the backlog.
	batchBytes = 1 << 20
	// maxNameLen bounds a follower's name.
	maxNameLen = 128
)

// snapshotChunk is the size of one snapshot frame's SET ops (a variable:
// tests cut snapshots of many frames from a small store).
var snapshotChunk = 256 << 10

type leaderHandler struct {
	l  *Leader
	st *kv.Store
}

// Handler serves the leader's routes for st (whose Tap is l).
func (l *Leader) Handler(st *kv.Store) http.Handler { return &leaderHandler{l: l, st: st} }

func jsonError(w http.ResponseWriter, status int, v map[string]any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

func (h *leaderHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == pathStream && r.Method == http.MethodGet:
		h.stream(w, r)
	case r.URL.Path == pathSnapshot && r.Method == http.MethodGet:
		h.snapshot(w, r)
	case r.URL.Path == pathAck && r.Method == http.MethodPost:
		h.ack(w, r)
	case r.URL.Path == pathFollowers && r.Method == http.MethodGet:
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(h.l.Followers())
	default:
		jsonError(w, http.StatusNotFound, map[string]any{"error": fmt.Sprintf("no replication route %s %s", r.Method, r.URL.Path)})
	}
}

// follower reads the name, ID and offset parameters.
func follower(r *http.Request) (name, id string, off int64, err error) {
	q := r.URL.Query()
	name = q.Get("name")
	if name == "" {
		name = r.RemoteAddr
	}
	if len(name) > maxNameLen {
		return "", "", 0, fmt.Errorf("name longer than %d bytes", maxNameLen)
	}
	id = q.Get("id")
	if off, err = strconv.ParseInt(q.Get("offset"), 10, 64); err != nil || off < 0 {
		return "", "", 0, fmt.Errorf("offset %q: want a non-negative integer", q.Get("offset"))
	}
	return name, id, off, nil
}

func (h *leaderHandler) stream(w http.ResponseWriter, r *http.Request) {
	name, id, off, err := follower(r)
	if err != nil {
		jsonError(w, http.StatusBadRequest, map[string]any{"error": err.Error()})
		return
	}
	l := h.l
	if _, _, _, ok := l.batch(id, off, 0); !ok {
		pos := l.Position()
		jsonError(w, http.StatusConflict, map[string]any{"error": "resync: replication ID or offset not in the backlog",
			"replid": pos.ID, "offset": pos.Offset, "backlog_start": l.BacklogStart()})
		return
	}
	if !l.touch(name, r.RemoteAddr, id, func(f *followerState) { f.streams++; f.sent = off }) {
		jsonError(w, http.StatusServiceUnavailable, map[string]any{"error": fmt.Sprintf("more than %d followers", maxFollowers)})
		return
	}
	defer l.touch(name, r.RemoteAddr, id, func(f *followerState) { f.streams-- })
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", ContentType)
	w.Header().Set("X-Repl-Id", id)
	w.WriteHeader(http.StatusOK)
	write := func(b []byte) bool {
		rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		_, err := w.Write(b)
		return err == nil
	}
	hb := time.NewTicker(HeartbeatEvery)
	defer hb.Stop()
	heartbeat := func() bool {
		pos := l.Position()
		fr := appendFrame(nil, KindHeartbeat, pos.Seq, l.now().UnixMilli(), binary.AppendUvarint(nil, uint64(pos.Offset)))
		return write(fr) && rc.Flush() == nil
	}
	if !heartbeat() { // the follower learns the leader's offset at once
		return
	}
	for {
		frames, next, wake, ok := l.batch(id, off, batchBytes)
		if !ok {
			return // another history, or the follower fell out of the backlog
		}
		if len(frames) > 0 {
			for _, fr := range frames {
				if !write(fr) {
					return
				}
			}
			off = next
			if rc.Flush() != nil {
				return
			}
			l.touch(name, r.RemoteAddr, id, func(f *followerState) { f.sent = off })
			select {
			case <-hb.C:
				if !heartbeat() {
					return
				}
			default:
			}
			continue
		}
		select {
		case <-wake:
		case <-hb.C:
			if !heartbeat() {
				return
			}
		case <-r.Context().Done():
			return
		case <-l.closed:
			return
		}
	}
}

func (h *leaderHandler) snapshot(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	var pos Position
	started := false
	start := func() {
		started = true
		w.Header().Set("Content-Type", ContentType)
		w.Header().Set("X-Repl-Id", pos.ID)
		w.Header().Set("X-Repl-Offset", strconv.FormatInt(pos.Offset, 10))
		w.Header().Set("X-Repl-Seq", strconv.FormatUint(pos.Seq, 10))
		w.WriteHeader(http.StatusOK)
	}
	var chunk, fr []byte
	var end snapshotEnd
	emit := func(kind byte, seq uint64, payload []byte) error {
		fr = appendFrame(fr[:0], kind, seq, h.l.now().UnixMilli(), payload)
		rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		_, err := w.Write(fr)
		return err
	}
	emitChunk := func() error {
		end.Frames++
		end.CRC = crc32.Update(end.CRC, castagnoli, chunk)
		err := emit(KindSnapshot, uint64(end.Frames), chunk)
		chunk = chunk[:0]
		return err
	}
	err := h.st.Snapshot(func() { pos = h.l.markSnapshot() }, func(key string, val []byte, exp int64) error {
		if !started {
			start()
		}
		chunk = kv.AppendSetOp(chunk, key, val, exp)
		end.Ops++
		if len(chunk) < snapshotChunk {
			return nil
		}
		return emitChunk()
	})
	if !started {
		start()
	}
	if err == nil && len(chunk) > 0 {
		err = emitChunk()
	}
	if err == nil {
		end.Pos = pos
		err = emit(KindEnd, uint64(end.Frames+1), end.encode())
	}
	if err != nil && !errors.Is(err, http.ErrAbortHandler) {
		// The follower sees a cut body without an 'E' frame and retries.
		return
	}
}

func (h *leaderHandler) ack(w http.ResponseWriter, r *http.Request) {
	name, id, off, err := follower(r)
	if err != nil {
		jsonError(w, http.StatusBadRequest, map[string]any{"error": err.Error()})
		return
	}
	if !h.l.touch(name, r.RemoteAddr, id, func(f *followerState) { f.acked = off }) {
		jsonError(w, http.StatusServiceUnavailable, map[string]any{"error": fmt.Sprintf("more than %d followers", maxFollowers)})
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
