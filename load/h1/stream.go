package h1

import (
	"bytes"
	"fmt"
	"io"

	"github.com/wirebench/wirebench/load/clientio"
)

// Stream is the push form of ParseResponse for the event loop: bytes go
// in as they arrive (feed, then eof when the server hangs up), each byte
// is looked at once, and only what must be kept is kept — the head (up to
// maxHead), a chunk-size line, and the body when it is checked (up to
// maxBody). The loop used to append every byte and re-parse from the
// start on each read: quadratic, and unbounded against an endless head.
//
// It shares headState with ParseResponse, and FuzzStreamMatchesParse
// holds the two to the same answers.
type Stream struct {
	Resp   Response
	head   headState
	line   []byte // the partial line: status/header, chunk size, trailer
	st     streamState
	remain int64 // body or chunk bytes still to come
	keep   bool  // keep the body in resp.Body
	noBody bool  // response to HEAD
}

type streamState uint8

const (
	sHead      streamState = iota // status line and headers
	sBody                         // Content-Length body, remain bytes left
	sChunkSize                    // a chunk-size line
	sChunkData                    // chunk data, remain bytes left
	sChunkCRLF                    // the CRLF after chunk data
	sTrailer                      // trailer lines up to the empty one
	sToEOF                        // body delimited by the end of the connection
	sDone                         // one whole response
)

// maxChunkLine bounds a chunk-size line (size and extensions).
const maxChunkLine = 4 << 10

// Reset prepares for the next response.
func (s *Stream) Reset(keep, noBody bool) {
	s.head = headState{}
	s.line = s.line[:0]
	s.st, s.remain = sHead, 0
	s.keep, s.noBody = keep, noBody
	s.Resp.Body = s.Resp.Body[:0]
	s.Resp.BodyLen, s.Resp.ToEOF = 0, false
}

// Feed consumes p and returns how many bytes it used: fewer than len(p)
// only when the response ended inside p (the rest belongs to no request).
// done reports a whole response; err a malformed or oversized one.
func (s *Stream) Feed(p []byte) (n int, done bool, err error) {
	for n < len(p) && s.st != sDone {
		var k int
		switch s.st {
		case sHead, sChunkSize, sChunkCRLF, sTrailer:
			var line []byte
			if line, k, err = s.takeLine(p[n:]); err != nil || line == nil {
				return n + k, false, err
			}
			err = s.onLine(line)
		case sBody, sChunkData:
			k = int(min(s.remain, int64(len(p)-n)))
			err = s.onBody(p[n : n+k])
			if s.remain -= int64(k); s.remain == 0 {
				if s.st == sBody {
					s.st = sDone
				} else {
					s.st = sChunkCRLF
				}
			}
		case sToEOF:
			k = len(p) - n
			err = s.onBody(p[n:])
		}
		n += k
		if err != nil {
			return n, false, err
		}
	}
	return n, s.st == sDone, nil
}

// EOF tells the stream the server closed the connection: a body that runs
// to EOF is complete; anything else was cut short.
func (s *Stream) EOF() (done bool, err error) {
	switch s.st {
	case sDone:
		return true, nil
	case sToEOF:
		s.st = sDone
		return true, nil
	}
	return false, io.ErrUnexpectedEOF
}

// takeLine gathers a line ending in '\n' from p; nil until it is whole.
// Lines arriving whole in one read are not copied.
func (s *Stream) takeLine(p []byte) (line []byte, k int, err error) {
	max := maxChunkLine
	if s.st == sHead || s.st == sTrailer {
		max = clientio.MaxHead - s.head.size // the head and trailers share maxHead
	}
	i := bytes.IndexByte(p, '\n')
	if i < 0 {
		if len(s.line)+len(p) > max {
			return nil, len(p), s.tooLong()
		}
		s.line = append(s.line, p...)
		return nil, len(p), nil
	}
	k = i + 1
	if len(s.line)+k > max {
		return nil, k, s.tooLong()
	}
	if len(s.line) == 0 {
		return p[:k], k, nil
	}
	s.line = append(s.line, p[:k]...)
	line, s.line = s.line, s.line[:0]
	return line, k, nil
}

func (s *Stream) tooLong() error {
	if s.st == sHead || s.st == sTrailer {
		return fmt.Errorf("%w: response head over %d bytes", clientio.ErrTooLarge, clientio.MaxHead)
	}
	return fmt.Errorf("%w: chunk line over %d bytes", clientio.ErrMalformed, maxChunkLine)
}

// onLine handles one whole line in the current state.
func (s *Stream) onLine(line []byte) error {
	switch s.st {
	case sHead:
		if err := s.head.line(&s.Resp, line); err != nil {
			return err
		}
		if s.head.done {
			if s.keep && s.head.length > clientio.MaxBody && !s.head.bodiless(s.noBody) {
				return fmt.Errorf("%w: body of %d bytes", clientio.ErrTooLarge, s.head.length)
			}
			s.startBody()
		}
	case sChunkSize:
		l := trimCRLF(line)
		if i := bytes.IndexByte(l, ';'); i >= 0 {
			l = l[:i] // chunk extensions
		}
		size, ok := parseHex(bytes.TrimSpace(l))
		switch {
		case !ok:
			return fmt.Errorf("%w: chunk size %q", clientio.ErrMalformed, trim(l))
		case size == 0:
			s.st = sTrailer
		default:
			s.st, s.remain = sChunkData, int64(size)
		}
	case sChunkCRLF:
		if len(trimCRLF(line)) != 0 {
			return fmt.Errorf("%w: no CRLF after chunk", clientio.ErrMalformed)
		}
		s.st = sChunkSize
	case sTrailer:
		if s.head.size += len(line); len(trimCRLF(line)) == 0 {
			s.st = sDone
		}
	}
	return nil
}

// startBody picks the body framing once the head is complete.
func (s *Stream) startBody() {
	h := &s.head
	switch {
	case h.interim: // 1xx: the final response follows on the same connection
		s.Reset(s.keep, s.noBody)
	case h.bodiless(s.noBody):
		s.st = sDone
	case h.chunked:
		s.st = sChunkSize
	case h.length == 0:
		s.st = sDone
	case h.length > 0:
		s.st, s.remain = sBody, h.length
	default:
		s.Resp.Close, s.Resp.ToEOF = true, true
		s.st = sToEOF
	}
}

// onBody counts body bytes and keeps them if asked, up to maxBody.
func (s *Stream) onBody(b []byte) error {
	s.Resp.BodyLen += len(b)
	if !s.keep {
		return nil
	}
	if len(s.Resp.Body)+len(b) > clientio.MaxBody {
		return fmt.Errorf("%w: body over %d bytes", clientio.ErrTooLarge, clientio.MaxBody)
	}
	s.Resp.Body = append(s.Resp.Body, b...)
	return nil
}
