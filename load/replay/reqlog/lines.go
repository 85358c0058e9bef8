package reqlog

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// MaxExamples is how many malformed lines a Malformed keeps to show.
const MaxExamples = 5

// Malformed counts the lines a reader skipped and keeps the first few,
// so a summary can show them (never a crash, never a silent drop).
type Malformed struct {
	N        int64
	Examples []string // "line 12: bad time \"x\"", at most MaxExamples
}

// Add counts one skipped line.
func (m *Malformed) Add(lineNo int64, why string) {
	m.N++
	if len(m.Examples) < MaxExamples {
		m.Examples = append(m.Examples, fmt.Sprintf("line %d: %s", lineNo, why))
	}
}

// Lines reads a file a line at a time in a bounded buffer: a line
// longer than MaxLine is skipped whole and counted (bufio.Scanner would
// stop the whole read there).
type Lines struct {
	br   *bufio.Reader
	buf  []byte
	No   int64 // number of the line Next returned, from 1
	Bad  *Malformed
	Max  int // 0: MaxLine
	long bool
}

// NewLines reads r, counting skipped lines into bad.
func NewLines(r io.Reader, bad *Malformed) *Lines {
	return &Lines{br: bufio.NewReaderSize(r, 64<<10), Bad: bad}
}

// Next returns the next non-empty line without its end of line (valid
// until the next call), or io.EOF.
func (l *Lines) Next() ([]byte, error) {
	max := l.Max
	if max <= 0 {
		max = MaxLine
	}
	for {
		frag, err := l.br.ReadSlice('\n')
		if len(frag) > 0 || err == nil {
			if !l.long && len(l.buf)+len(frag) <= max+2 {
				l.buf = append(l.buf, frag...)
			} else {
				l.long, l.buf = true, l.buf[:0]
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		if err != nil && len(l.buf) == 0 && !l.long {
			return nil, io.EOF
		}
		l.No++
		long := l.long
		b := bytes.TrimRight(l.buf, "\r\n")
		l.buf, l.long = l.buf[:0], false
		if long || len(b) > max {
			l.Bad.Add(l.No, fmt.Sprintf("longer than %d bytes", max))
			if err != nil {
				return nil, io.EOF
			}
			continue
		}
		if len(bytes.TrimSpace(b)) == 0 {
			if err != nil {
				return nil, io.EOF
			}
			continue
		}
		return b, nil
	}
}
