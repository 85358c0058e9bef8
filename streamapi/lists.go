package streamapi

// NDJSON and Server-Sent Events lists. Both walk the store's shared,
// immutable snapshot (the one GET /users encodes, no copy) and encode one
// record at a time into a fixed buffer that goes to the socket when full:
// a stream's memory is that buffer, whatever the list's length, and a
// reader that stops reading blocks the writer until MaxDuration.

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wirebench/wirebench/api"
)

// streamBuffer is what one stream encodes ahead of the socket. The first
// record is flushed on its own so the time to the first item does not
// wait for a full buffer.
const streamBuffer = 16 << 10

// flusher writes through to the response and flushes it, so that each
// full buffer leaves at once (not held in net/http's own buffer).
type flusher struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func (f flusher) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if err == nil {
		err = f.rc.Flush()
	}
	return n, err
}

// abort ends a response mid-stream so the client sees an error, not a
// complete list: net/http closes the connection (HTTP/2: resets the
// stream) without the terminating chunk.
func abort() { panic(http.ErrAbortHandler) }

func (h *Handler) serveNDJSON(w http.ResponseWriter, r *http.Request, users bool) {
	r, cancel := h.bound(w, r)
	defer cancel()
	hdr := w.Header()
	hdr.Set("Content-Type", MediaNDJSON)
	hdr.Set("Vary", "Accept")
	hdr.Set("Cache-Control", "no-store")
	if r.Method == http.MethodHead {
		w.WriteHeader(http.StatusOK)
		return
	}
	ctx := r.Context()
	bw := bufio.NewWriterSize(flusher{w, http.NewResponseController(w)}, streamBuffer)
	enc := json.NewEncoder(bw) // Encode ends each record with '\n'
	emit := func(i int, v any) {
		if ctx.Err() != nil {
			abort()
		}
		if err := enc.Encode(v); err != nil {
			abort() // the socket failed or the deadline passed
		}
		if i == 0 && bw.Flush() != nil {
			abort()
		}
	}
	// &list[i]: the snapshot's own element, no copy (it is immutable).
	if users {
		list := h.st.ListUsers()
		for i := range list {
			emit(i, &list[i])
		}
	} else {
		list := h.st.ListTodos()
		for i := range list {
			emit(i, &list[i])
		}
	}
	if bw.Flush() != nil {
		abort()
	}
}

// serveSSE streams the list as Server-Sent Events:
//
//	id: 1
//	event: user
//	data: {"id":1,"name":...}
//
// then "event: end" with data {"count":N}. A Last-Event-ID header (sent
// by EventSource when it reconnects) or ?after=ID resumes after that id.
// With ?follow=1 (users only: their ids grow) the stream stays open and
// pushes each new user as the store gets it, until MaxDuration or the
// client leaves; a comment line (": keep-alive") every KeepAliveEvery
// of silence keeps proxies from closing it.
func (h *Handler) serveSSE(w http.ResponseWriter, r *http.Request, users bool) {
	r, cancel := h.bound(w, r)
	defer cancel()
	q := r.URL.Query()
	after := cmp.Or(r.Header.Get("Last-Event-ID"), q.Get("after"))
	follow := q.Get("follow") == "1" || q.Get("follow") == "true"
	var afterID int64
	if after != "" && users {
		var err error
		if afterID, err = strconv.ParseInt(after, 10, 64); err != nil {
			http.Error(w, fmt.Sprintf("Last-Event-ID/after %q: not a user id", after), http.StatusBadRequest)
			return
		}
	}
	if follow && !users {
		http.Error(w, "follow=1: only /users/events can follow (todo ids are random)", http.StatusBadRequest)
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", MediaSSE)
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("Vary", "Accept")
	if r.Method == http.MethodHead {
		w.WriteHeader(http.StatusOK)
		return
	}
	ctx := r.Context()
	rc := http.NewResponseController(w)
	bw := bufio.NewWriterSize(flusher{w, rc}, streamBuffer)
	count := 0
	// One encoder and scratch buffers for the whole stream: an event
	// costs the JSON encoding's own allocations only.
	var data bytes.Buffer
	enc := json.NewEncoder(&data) // Encode ends the value with '\n'
	var idBuf []byte
	// event writes one event; id is userID when > 0, else todoID.
	event := func(kind string, v any, userID int64, todoID string) {
		if ctx.Err() != nil {
			abort()
		}
		data.Reset()
		if err := enc.Encode(v); err != nil { // JSON has no raw newlines: data is one line
			abort()
		}
		switch {
		case userID > 0:
			idBuf = strconv.AppendInt(append(idBuf[:0], "id: "...), userID, 10)
			bw.Write(append(idBuf, '\n'))
		case todoID != "":
			bw.WriteString("id: ")
			bw.WriteString(todoID)
			bw.WriteByte('\n')
		}
		bw.WriteString("event: ")
		bw.WriteString(kind)
		bw.WriteString("\ndata: ")
		bw.Write(data.Bytes())
		if err := bw.WriteByte('\n'); err != nil {
			abort()
		}
		if count == 0 && bw.Flush() != nil {
			abort()
		}
		count++
	}
	if users {
		list := h.st.ListUsers()
		i, _ := slices.BinarySearchFunc(list, afterID+1, func(u api.User, id int64) int { return cmp.Compare(u.ID, id) })
		for j := i; j < len(list); j++ {
			event("user", &list[j], list[j].ID, "")
			afterID = list[j].ID
		}
	} else {
		list := h.st.ListTodos()
		i := 0
		if after != "" {
			i, _ = slices.BinarySearchFunc(list, after, func(t api.Todo, id string) int { return strings.Compare(t.ID, id) })
			if i < len(list) && list[i].ID == after {
				i++
			}
		}
		for j := i; j < len(list); j++ {
			event("todo", &list[j], 0, list[j].ID)
		}
	}
	if follow {
		if !h.followUsers(ctx, bw, afterID, func(u *api.User) { event("user", u, u.ID, "") }) {
			abort() // the client left
		}
		ctx = context.WithoutCancel(ctx) // MaxDuration passed: still write "end"
	}
	event("end", struct {
		Count int `json:"count"`
	}{count}, 0, "")
	if bw.Flush() != nil {
		abort()
	}
}

// followUsers polls the snapshot (rebuilt only after a write) every
// FollowEvery and sends the users with ids above afterID until ctx ends:
// true at the stream's deadline (a normal end, the caller writes "end"),
// false when the client left.
func (h *Handler) followUsers(ctx context.Context, bw *bufio.Writer, afterID int64, send func(*api.User)) bool {
	tick := time.NewTicker(h.opts.FollowEvery)
	defer tick.Stop()
	lastWrite := time.Now()
	if bw.Flush() != nil {
		return false
	}
	for {
		select {
		case <-ctx.Done():
			return errors.Is(ctx.Err(), context.DeadlineExceeded)
		case <-tick.C:
		}
		list := h.st.ListUsers()
		i, _ := slices.BinarySearchFunc(list, afterID+1, func(u api.User, id int64) int { return cmp.Compare(u.ID, id) })
		for _, u := range list[i:] {
			send(&u)
			afterID = u.ID
		}
		switch {
		case i < len(list):
			lastWrite = time.Now()
		case time.Since(lastWrite) >= h.opts.KeepAliveEvery:
			bw.WriteString(": keep-alive\n\n")
			lastWrite = time.Now()
		default:
			continue
		}
		if bw.Flush() != nil {
			return false
		}
	}
}
