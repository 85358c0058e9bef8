// Package bulkapi serves POST /airports: a bulk upsert of airports into
// SQLite, one record at a time from the request body (the default), or
// ?mode=buffered — the airports seed's naive handler, read whole, decoded
// whole, then written — kept to be measured against.
//
// One request is one transaction: a bad record answers 400 naming its
// index and field, and nothing of that request is committed. A streamed
// body is decoded and checked as it arrives into a spool (bulk.Spool:
// memory, then a temporary file beside the database), and written in one
// transaction once it has all arrived, so no request holds SQLite's write
// lock — or the other requests' turn — while it waits for its client
// (docs/bulk.md). The reply is
// JSON: {"inserted":N,"updated":M,"records":N+M}, or {"error","code",
// "index","field"}.
package bulkapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wirebench/wirebench/bulk"
	"github.com/wirebench/wirebench/store/sqlite"
)

// Defaults for Options.
const (
	DefaultMaxBody         = 2 << 30 // streaming: bounded time, not memory
	DefaultMaxBufferedBody = 8 << 20 // the API's --max-body
	DefaultStallTimeout    = 30 * time.Second
	DefaultMaxSpoolTotal   = 8 << 30
	DefaultTimeout         = time.Hour
)

// Options configure the handler; the zero value is the defaults.
type Options struct {
	// MaxBody bounds a streamed body (413 beyond). Streaming holds one
	// record at a time, so this bounds time and disk, not memory.
	MaxBody int64
	// MaxBufferedBody bounds a ?mode=buffered body: a declared
	// Content-Length over it is refused at once, a body that grows past
	// it as soon as it does (413). One buffered request runs at a time,
	// so the server holds at most one such body and its records.
	MaxBufferedBody int64
	// MaxSpool bounds the records of one streamed request waiting for
	// their transaction, in bytes of the spool format (a little less than
	// the same records as CSV); beyond, 413. 0 is bulk.DefaultMaxSpool.
	// SpoolDir holds the spool's temporary file ("" is the database's
	// directory); SpoolMem is what a spool keeps in memory before it
	// uses the file (0 is bulk.DefaultSpoolMem).
	MaxSpool int64
	SpoolDir string
	SpoolMem int
	// MaxSpoolTotal bounds the spools of all requests receiving at once
	// (they no longer wait for one another): beyond, 503 with
	// Retry-After. 0 is DefaultMaxSpoolTotal.
	MaxSpoolTotal int64
	// StallTimeout drops a request whose body makes no progress for this
	// long; Timeout bounds a whole bulk request. They replace the
	// server's read and write timeouts on this route, which are sized
	// for small requests.
	StallTimeout, Timeout time.Duration
}

// Handler serves POST /airports. Safe for concurrent use; requests are
// received at once and written one at a time (SQLite has one writer).
type Handler struct {
	openDB   func() (*sqlite.DB, error)
	o        Options
	buffered chan struct{} // one buffered request at a time
	sorting  chan struct{} // one spool sorted at a time
	spooled  atomic.Int64  // bytes reserved by the spools of requests in flight
}

// spoolStep is how a request reserves its share of MaxSpoolTotal: ahead
// of what it spools, so the total is never passed.
const spoolStep = 256 << 10

var errSpoolBusy = errors.New("uploads in flight hold the server's whole spool budget (--bulk-max-spool-total)")

// New returns the handler over db.
func New(db *sqlite.DB, o Options) *Handler {
	return NewLazy(func() (*sqlite.DB, error) { return db, nil }, o)
}

// NewLazy returns a handler that opens its database with open on the
// first request that needs it (open's result is kept, error included):
// a server that never sees a bulk request never pays for SQLite.
func NewLazy(open func() (*sqlite.DB, error), o Options) *Handler {
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.MaxBufferedBody <= 0 {
		o.MaxBufferedBody = DefaultMaxBufferedBody
	}
	if o.MaxSpoolTotal <= 0 {
		o.MaxSpoolTotal = DefaultMaxSpoolTotal
	}
	if o.StallTimeout <= 0 {
		o.StallTimeout = DefaultStallTimeout
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	return &Handler{openDB: sync.OnceValues(open), o: o, buffered: make(chan struct{}, 1), sorting: make(chan struct{}, 1)}
}

// Reply is the body of a successful request.
type Reply struct {
	Inserted int64 `json:"inserted"`
	Updated  int64 `json:"updated"`
	Records  int64 `json:"records"`
}

// ErrorReply is the body of a failed request; Index and Field name the bad
// record when there is one.
type ErrorReply struct {
	Error string `json:"error"`
	Code  string `json:"code"`
	Index *int   `json:"index,omitempty"`
	Field string `json:"field,omitempty"`
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeErr(w, http.StatusMethodNotAllowed, "method_not_allowed", "POST a bulk body to /airports")
		return
	}
	f, err := bulk.FormatOf(r.Header.Get("Content-Type"))
	if err != nil {
		writeErr(w, http.StatusUnsupportedMediaType, "unsupported_media_type",
			fmt.Sprintf("%v: want application/json, application/x-ndjson, text/toon, application/x-protobuf-delimited or text/csv", err))
		return
	}
	if ce := r.Header.Get("Content-Encoding"); ce != "" && ce != "identity" {
		writeErr(w, http.StatusUnsupportedMediaType, "unsupported_media_type", "Content-Encoding "+ce+" is not accepted on /airports")
		return
	}
	mode := r.URL.Query().Get("mode")
	if mode != "" && mode != "stream" && mode != "buffered" {
		writeErr(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("mode %q: want stream (the default) or buffered", mode))
		return
	}
	limit := h.o.MaxBody
	if mode == "buffered" {
		limit = h.o.MaxBufferedBody
	}
	if r.ContentLength > limit {
		writeErr(w, http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("body of %d bytes: the limit is %d", r.ContentLength, limit))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.o.Timeout)
	defer cancel()
	rc := http.NewResponseController(w)
	deadline := time.Now().Add(h.o.Timeout)
	rc.SetWriteDeadline(deadline.Add(h.o.StallTimeout))
	// Each read allows StallTimeout for the next; once the body is all
	// in, the request may wait for another's transaction, under the
	// request's deadline only.
	rc.SetReadDeadline(deadline)
	body := &stallReader{r: http.MaxBytesReader(w, r.Body, limit), rc: rc, stall: h.o.StallTimeout, deadline: deadline}
	var res sqlite.Result
	if mode == "buffered" {
		res, err = h.bufferedUpsert(ctx, f, body)
	} else {
		res, err = h.spooledUpsert(ctx, f, body)
	}
	if err != nil {
		h.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(Reply{Inserted: res.Inserted, Updated: res.Updated, Records: res.Inserted + res.Updated})
}

// bufferedUpsert is the seed's naive handler: read all, decode all, then
// write. It runs one at a time, and only under MaxBufferedBody.
func (h *Handler) bufferedUpsert(ctx context.Context, f string, body io.Reader) (sqlite.Result, error) {
	select {
	case h.buffered <- struct{}{}:
	case <-ctx.Done():
		return sqlite.Result{}, ctx.Err()
	}
	defer func() { <-h.buffered }()
	all, err := io.ReadAll(body)
	if err != nil {
		return sqlite.Result{}, err
	}
	dec, err := bulk.NewDecoder(f, bytes.NewReader(all))
	if err != nil {
		return sqlite.Result{}, err
	}
	var recs []bulk.Airport
	for {
		var a bulk.Airport
		if err := dec.Next(&a); err == io.EOF {
			break
		} else if err != nil {
			return sqlite.Result{}, err
		}
		recs = append(recs, a)
	}
	all = nil
	return h.upsert(ctx, &sliceDecoder{recs: recs})
}

// spooledUpsert decodes and checks the whole body into a spool, then
// writes it in one transaction: the write lock is taken only for records
// already received.
func (h *Handler) spooledUpsert(ctx context.Context, f string, body io.Reader) (sqlite.Result, error) {
	dec, err := bulk.NewDecoder(f, body)
	if err != nil {
		return sqlite.Result{}, err
	}
	db, err := h.openDB()
	if err != nil {
		return sqlite.Result{}, fmt.Errorf("%w: %w", sqlite.ErrDB, err)
	}
	dir := h.o.SpoolDir
	if p := db.Path(); dir == "" && p != "" && p != ":memory:" {
		dir = filepath.Dir(p)
	}
	sp := bulk.NewSpool(bulk.SpoolOptions{Dir: dir, MemBytes: h.o.SpoolMem, MaxBytes: h.o.MaxSpool})
	defer sp.Close()
	var reserved int64
	defer func() { h.spooled.Add(-reserved) }()
	var a bulk.Airport
	for {
		if err := dec.Next(&a); err == io.EOF {
			break
		} else if err != nil {
			return sqlite.Result{}, err
		}
		if err := sp.Add(&a); err != nil {
			return sqlite.Result{}, err
		}
		for sp.Size() > reserved {
			if h.spooled.Add(spoolStep) > h.o.MaxSpoolTotal {
				h.spooled.Add(-spoolStep)
				return sqlite.Result{}, fmt.Errorf("%w: %d bytes", errSpoolBusy, h.o.MaxSpoolTotal)
			}
			reserved += spoolStep
		}
		if sp.Len()&1023 == 0 && ctx.Err() != nil {
			return sqlite.Result{}, ctx.Err()
		}
	}
	// In key order, the inserts append to the primary-key index instead
	// of landing all over it (bulk/sort.go). One request sorts at a
	// time, so the sort's memory is paid once, not once per upload.
	select {
	case h.sorting <- struct{}{}:
	case <-ctx.Done():
		return sqlite.Result{}, ctx.Err()
	}
	recs, err := sp.Sorted(bulk.SortOptions{})
	<-h.sorting
	if err != nil {
		return sqlite.Result{}, err
	}
	return db.Upsert(ctx, recs)
}

func (h *Handler) upsert(ctx context.Context, dec bulk.Decoder) (sqlite.Result, error) {
	db, err := h.openDB()
	if err != nil {
		return sqlite.Result{}, fmt.Errorf("%w: %w", sqlite.ErrDB, err)
	}
	return db.Upsert(ctx, dec)
}

func (h *Handler) fail(w http.ResponseWriter, err error) {
	var re *bulk.RecordError
	var mb *http.MaxBytesError
	switch {
	case errors.As(err, &mb):
		writeErr(w, http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("body over the limit of %d bytes; nothing committed", mb.Limit))
	case errors.Is(err, bulk.ErrSpoolFull):
		writeErr(w, http.StatusRequestEntityTooLarge, "too_large", err.Error()+" (--bulk-max-spool); nothing committed")
	case errors.Is(err, errSpoolBusy):
		w.Header().Set("Retry-After", "1")
		writeErr(w, http.StatusServiceUnavailable, "busy", err.Error()+"; nothing committed, retry later")
	case errors.Is(err, bulk.ErrSpoolIO), errors.Is(err, bulk.ErrSpoolCorrupt):
		writeErr(w, http.StatusInternalServerError, "internal", err.Error()+"; nothing committed")
	case errors.Is(err, errStalled), errors.Is(err, context.DeadlineExceeded):
		writeErr(w, http.StatusRequestTimeout, "timeout", err.Error()+"; nothing committed")
	case errors.As(err, &re) && !errors.Is(err, bulk.ErrRead):
		idx := re.Index
		body := ErrorReply{Error: re.Error() + "; nothing committed", Code: "bad_record", Index: &idx, Field: re.Field}
		writeJSON(w, http.StatusBadRequest, body)
	case errors.Is(err, sqlite.ErrClosed):
		writeErr(w, http.StatusServiceUnavailable, "unavailable", err.Error())
	case errors.Is(err, sqlite.ErrDB):
		writeErr(w, http.StatusInternalServerError, "internal", err.Error()+"; nothing committed")
	default:
		// A body that could not be read (client gone, connection cut).
		writeErr(w, http.StatusBadRequest, "bad_request", "reading the body: "+err.Error()+"; nothing committed")
	}
}

func writeErr(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, ErrorReply{Error: msg, Code: code})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

type sliceDecoder struct {
	recs []bulk.Airport
	i    int
}

func (s *sliceDecoder) Next(a *bulk.Airport) error {
	if s.i == len(s.recs) {
		s.recs = nil
		return io.EOF
	}
	*a = s.recs[s.i]
	s.recs[s.i] = bulk.Airport{}
	s.i++
	return nil
}

var errStalled = errors.New("request body stalled")

// stallReader moves the connection's read deadline forward on every read,
// so a body that keeps coming may take up to the request's deadline, and
// one that stops is dropped after the stall timeout.
type stallReader struct {
	r        io.Reader
	rc       *http.ResponseController
	stall    time.Duration
	deadline time.Time
}

func (s *stallReader) Read(p []byte) (int, error) {
	d := time.Now().Add(s.stall)
	if d.After(s.deadline) {
		d = s.deadline
	}
	s.rc.SetReadDeadline(d)
	n, err := s.r.Read(p)
	if err != nil && errors.Is(err, errTimeout) {
		err = fmt.Errorf("%w: %v", errStalled, err)
	}
	return n, err
}
