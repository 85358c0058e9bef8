package reqlog

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

// Options say what a log keeps. The zero value keeps no secrets: the
// values of secret headers and query parameters (IsSecret, and those of
// a form body) are written Redacted, and the bodies of /kv/ requests and
// those over MaxKeptBody are kept out, their length noted.
type Options struct {
	// Secrets keeps secret values as sent (--record-secrets).
	Secrets bool
	// Bodies keeps every body, up to MaxBody (--record-bodies).
	Bodies bool
	// Known are credentials the recorder knows (serve's --auth-token):
	// without Secrets, a path segment holding one is written Redacted,
	// as one holding the request's own secret header or query values.
	Known []string
}

// WriterStats count what a Writer wrote and kept out.
type WriterStats struct {
	Requests  int64 // lines written
	Redacted  int64 // secret values replaced by Redacted
	BodiesOut int64 // bodies kept out
}

// Writer writes a request log. Safe for concurrent use: lines are
// whole, in the order Write is called.
type Writer struct {
	o   Options
	mu  sync.Mutex
	bw  *bufio.Writer
	err error
	buf []byte
	st  WriterStats
}

// NewWriter starts a log on w with its header line.
func NewWriter(w io.Writer, o Options) *Writer {
	lw := &Writer{o: o, bw: bufio.NewWriterSize(w, 256<<10)}
	_, lw.err = fmt.Fprintf(lw.bw, "{\"wirebench\":%q}\n", Version)
	return lw
}

// Write appends one request, as the Writer's Options keep it (r is not
// changed). A body longer than MaxBody is cut and marked. The first
// write error sticks and is returned by Flush.
func (w *Writer) Write(r *Request) error {
	q, redacted, out := w.o.keep(r)
	l := line{T: q.At, M: q.Method, U: q.Target, H: q.Header, B: q.Body, BT: q.Truncated, BL: q.BodyLen, S: q.Status}
	if len(l.B) > MaxBody {
		l.BL = max(l.BL, int64(len(l.B)))
		l.B, l.BT = l.B[:MaxBody], true
	}
	b, err := json.Marshal(&l)
	if err != nil {
		return fmt.Errorf("reqlog: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.buf = append(append(w.buf[:0], b...), '\n')
	if _, w.err = w.bw.Write(w.buf); w.err == nil {
		w.st.Requests++
		w.st.Redacted += int64(redacted)
		if out {
			w.st.BodiesOut++
		}
	}
	return w.err
}

// Stats returns what was written so far.
func (w *Writer) Stats() WriterStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.st
}

// FlushEvery flushes the log every d until stop is called, so that a
// process that dies without its final Flush (SIGKILL, the OOM killer, a
// second signal during its shutdown) keeps what it logged up to about d
// before. A write error sticks, as for Flush.
func (w *Writer) FlushEvery(d time.Duration) (stop func()) {
	done := make(chan struct{})
	var once sync.Once
	go func() {
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				_ = w.Flush()
			case <-done:
				return
			}
		}
	}()
	return func() { once.Do(func() { close(done) }) }
}

// FlushInterval is how often the commands' recordings are flushed while
// they run (FlushEvery).
const FlushInterval = time.Second

// Flush writes what is buffered and returns the first error.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = w.bw.Flush()
	}
	if w.err != nil {
		return fmt.Errorf("reqlog: %w", w.err)
	}
	return nil
}
