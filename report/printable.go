package report

import (
	"fmt"
	"io"
)

// printable escapes, in everything a report writes, the control bytes
// no report format holds on purpose (C0 but tab, newline and carriage
// return; DEL) as \xNN: a recording's or a server's text (endpoint
// names, failures, warnings) then never drives the terminal that shows
// the report, nor breaks a table or a cell.
type printable struct {
	w   io.Writer
	buf []byte
}

func printableWriter(w io.Writer) io.Writer { return &printable{w: w} }

func (p *printable) Write(b []byte) (int, error) {
	clean := true
	for _, c := range b {
		if isControl(c) {
			clean = false
			break
		}
	}
	if clean {
		return p.w.Write(b)
	}
	p.buf = p.buf[:0]
	for _, c := range b {
		if isControl(c) {
			p.buf = fmt.Appendf(p.buf, `\x%02x`, c)
		} else {
			p.buf = append(p.buf, c)
		}
	}
	if _, err := p.w.Write(p.buf); err != nil {
		return 0, err
	}
	return len(b), nil
}

func isControl(c byte) bool { return c < ' ' && c != '\t' && c != '\n' && c != '\r' || c == 0x7f }
