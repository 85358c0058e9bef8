package reqlog

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// Writer writes a request log. Safe for concurrent use: lines are
// whole, in the order Write is called.
type Writer struct {
	mu  sync.Mutex
	bw  *bufio.Writer
	err error
	buf []byte
}

// NewWriter starts a log on w with its header line.
func NewWriter(w io.Writer) *Writer {
	lw := &Writer{bw: bufio.NewWriterSize(w, 256<<10)}
	_, lw.err = fmt.Fprintf(lw.bw, "{\"wirebench\":%q}\n", Version)
	return lw
}

// Write appends one request. A body longer than MaxBody is cut and
// marked. The first write error sticks and is returned by Flush.
func (w *Writer) Write(r *Request) error {
	l := line{T: r.At, M: r.Method, U: r.Target, H: r.Header, B: r.Body, BT: r.Truncated, S: r.Status}
	if len(l.B) > MaxBody {
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
	_, w.err = w.bw.Write(w.buf)
	return w.err
}

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
