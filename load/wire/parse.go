package wire

import (
	"bytes"
	"encoding/binary"
	"strconv"

	"github.com/wirebench/wirebench/load/clientio"
)

// The streaming parsers of layer accounting (layers.go). Each takes
// the bytes of one direction in whatever chunks the socket gives and adds
// every byte to exactly one layer; the inner parsers get the payload the
// outer ones delimit. They keep a few bytes of state, never a frame or a
// message (the HTTP/1.1 header block is kept, up to maxHead).

type parser interface{ feed(p []byte) }

// rawParser counts everything as one layer.
type rawParser struct {
	c *layerCounts
	l layer
}

func (r rawParser) feed(p []byte) { r.c.add(r.l, len(p)) }

func rawBody(c *layerCounts) parser { return rawParser{c, lMessage} }

// HTTP/2 frame types (RFC 9113 §6).
const (
	h2Data         = 0x0
	h2Headers      = 0x1
	h2PushPromise  = 0x5
	h2Continuation = 0x9
	h2RstStream    = 0x3

	h2FlagEndStream = 0x1
	h2FlagPadded    = 0x8
	h2FlagPriority  = 0x20
)

// h2Preface is what a client sends first on an HTTP/2 connection.
const h2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// h2Parser splits one direction of an HTTP/2 connection: the preface (the
// client's side), frame headers, padding, HPACK blocks, control payloads,
// and DATA payloads, which go to a per-stream envelope parser (gRPC).
type h2Parser struct {
	c       *layerCounts
	preface int // preface bytes still expected
	hdr     [9]byte
	hdrN    int
	// the frame being read: what is left of its payload, split into a
	// leading part (pad length, priority), the content and the padding
	typ, flags byte
	stream     uint32
	lead, body int
	pad        int
	needPadLen bool
	streams    map[uint32]*envelopeParser
	broken     bool
	plain      bool // DATA payload is Message whole (no envelopes)
}

func newH2Parser(c *layerCounts, client bool) *h2Parser {
	p := &h2Parser{c: c, streams: map[uint32]*envelopeParser{}}
	if client {
		p.preface = len(h2Preface)
	}
	return p
}

// maxH2Streams bounds the open streams a parser tracks; past it DATA
// counts as Message without envelope parsing (a client opens far fewer).
const maxH2Streams = 4096

func (h *h2Parser) feed(p []byte) {
	for len(p) > 0 {
		if h.broken {
			h.c.add(lOther, len(p))
			return
		}
		if h.preface > 0 {
			want := h2Preface[len(h2Preface)-h.preface:]
			n := 0
			for n < min(len(want), len(p)) && p[n] == want[n] {
				n++
			}
			if n < min(len(want), len(p)) { // not HTTP/2: from here on, Other
				h.broken = true
			}
			h.c.add(lH2Frames, n)
			h.preface -= n
			p = p[n:]
			continue
		}
		if h.hdrN < 9 {
			n := copy(h.hdr[h.hdrN:], p)
			h.hdrN += n
			h.c.add(lH2Frames, n)
			p = p[n:]
			if h.hdrN == 9 {
				h.startFrame()
			}
			continue
		}
		p = h.payload(p)
	}
}

func (h *h2Parser) startFrame() {
	length := int(h.hdr[0])<<16 | int(h.hdr[1])<<8 | int(h.hdr[2])
	h.typ, h.flags = h.hdr[3], h.hdr[4]
	h.stream = binary.BigEndian.Uint32(h.hdr[5:9]) & 0x7fffffff
	h.lead, h.body, h.pad, h.needPadLen = 0, length, 0, false
	switch h.typ {
	case h2Data, h2Headers, h2PushPromise:
		if h.flags&h2FlagPadded != 0 && length > 0 {
			h.needPadLen = true
			h.body--
		}
		if h.typ == h2Headers && h.flags&h2FlagPriority != 0 {
			h.lead = min(5, h.body)
		} else if h.typ == h2PushPromise {
			h.lead = min(4, h.body)
		}
		h.body -= h.lead
	}
	if h.typ == h2RstStream {
		delete(h.streams, h.stream)
	}
	h.finishIfEmpty()
}

// payload consumes what it can of the current frame's payload.
func (h *h2Parser) payload(p []byte) []byte {
	if h.needPadLen {
		h.pad = int(p[0])
		h.needPadLen = false
		h.c.add(lH2Frames, 1)
		if h.pad > h.lead+h.body { // a protocol error: the peer resets the connection
			h.broken = true
			return p[1:]
		}
		h.body -= h.pad
		h.finishIfEmpty()
		return p[1:]
	}
	if h.lead > 0 {
		n := min(h.lead, len(p))
		h.c.add(lH2Frames, n)
		h.lead -= n
		h.finishIfEmpty()
		return p[n:]
	}
	if h.body > 0 {
		n := min(h.body, len(p))
		switch h.typ {
		case h2Data:
			if h.plain {
				h.c.add(lMessage, n)
			} else {
				h.dataSink().feed(p[:n])
			}
		case h2Headers, h2PushPromise, h2Continuation:
			h.c.add(lH2Headers, n)
		default:
			h.c.add(lH2Frames, n)
		}
		h.body -= n
		h.finishIfEmpty()
		return p[n:]
	}
	n := min(h.pad, len(p))
	h.c.add(lH2Frames, n)
	h.pad -= n
	h.finishIfEmpty()
	return p[n:]
}

func (h *h2Parser) dataSink() parser {
	e, ok := h.streams[h.stream]
	if !ok {
		if len(h.streams) >= maxH2Streams {
			return rawBody(h.c)
		}
		e = newEnvelopeParser(h.c)
		h.streams[h.stream] = e
	}
	return e
}

// finishIfEmpty ends the frame when nothing of it is left.
func (h *h2Parser) finishIfEmpty() {
	if h.needPadLen || h.lead > 0 || h.body > 0 || h.pad > 0 {
		return
	}
	if h.flags&h2FlagEndStream != 0 && (h.typ == h2Data || h.typ == h2Headers) {
		delete(h.streams, h.stream)
	}
	h.hdrN = 0
}

// envelopeParser splits 5-byte enveloped messages (gRPC's
// Length-Prefixed-Message, gRPC-Web's and Connect streaming's envelopes):
// the prefix is Envelope, the message Message, except gRPC-Web trailer
// frames (flag 0x80) and Connect's end-of-stream message (flag 0x02),
// which are Envelope whole.
type envelopeParser struct {
	c    *layerCounts
	hdr  [5]byte
	hdrN int
	left int
	as   layer
}

func newEnvelopeParser(c *layerCounts) *envelopeParser { return &envelopeParser{c: c} }

func (e *envelopeParser) feed(p []byte) {
	for len(p) > 0 {
		if e.hdrN < 5 {
			n := copy(e.hdr[e.hdrN:], p)
			e.hdrN += n
			e.c.add(lEnvelope, n)
			p = p[n:]
			if e.hdrN == 5 {
				e.left = int(binary.BigEndian.Uint32(e.hdr[1:5]))
				e.as = lMessage
				if e.hdr[0]&0x80 != 0 || e.hdr[0]&0x02 != 0 {
					e.as = lEnvelope
				}
				if e.left == 0 {
					e.hdrN = 0
				}
			}
			continue
		}
		n := min(e.left, len(p))
		e.c.add(e.as, n)
		e.left -= n
		p = p[n:]
		if e.left == 0 {
			e.hdrN = 0
		}
	}
}

// lineBody splits a line-oriented body: NDJSON (each record Message, its
// newline Envelope) or, with sse, Server-Sent Events (the value of a
// "data:" line is Message; the field name, the optional space, the newline
// and every other line — event, id, retry, comments, the blank line ending
// an event — are Envelope). A CR before the LF counts with the line's
// content (our server writes LF only). Nothing is held back: each byte is
// counted as it arrives.
type lineBody struct {
	c   *layerCounts
	sse bool
	// pos is how much of "data:" the current line has matched (SSE, at
	// the start of a line); afterColon is set right after it.
	pos        int
	afterColon bool
	inLine     bool
	as         layer
}

func (l *lineBody) feed(p []byte) {
	const data = "data:"
	for len(p) > 0 {
		if !l.inLine {
			if !l.sse {
				l.inLine, l.as = true, lMessage
				continue
			}
			b := p[0]
			switch {
			case b == '\n':
				l.c.add(lEnvelope, 1)
				l.pos, l.afterColon = 0, false
				p = p[1:]
			case l.afterColon:
				l.inLine, l.as, l.afterColon, l.pos = true, lMessage, false, 0
				if b == ' ' {
					l.c.add(lEnvelope, 1)
					p = p[1:]
				}
			case b == data[l.pos]:
				l.c.add(lEnvelope, 1)
				l.pos++
				l.afterColon = l.pos == len(data)
				p = p[1:]
			default:
				l.inLine, l.as, l.pos = true, lEnvelope, 0
			}
			continue
		}
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			l.c.add(l.as, len(p))
			return
		}
		l.c.add(l.as, i)
		l.c.add(lEnvelope, 1)
		p = p[i+1:]
		l.inLine = false
	}
}

// h1Parser splits one direction of HTTP/1.1: start lines and headers,
// chunked framing, and bodies (given to body). A response with status 101
// switches the rest of the connection to up; so does a request with an
// Upgrade header on the request side.
type h1Parser struct {
	c        *layerCounts
	response bool
	body     parser
	up       parser
	upgraded bool

	head     []byte
	bodyLeft int64 // Content-Length left; -1: to EOF
	chunked  bool
	chunk    chunkState
	inBody   bool
	broken   bool
}

type chunkState struct {
	line     []byte // the size line being read
	left     int64  // chunk data left
	crlf     int    // CRLF bytes left after the data
	trailers bool   // in the trailer section after the last chunk
}

func newH1Parser(c *layerCounts, response bool, body parser) *h1Parser {
	if body == nil {
		body = rawBody(c)
	}
	return &h1Parser{c: c, response: response, body: body}
}

func (h *h1Parser) upgrade(up parser) *h1Parser { h.up = up; return h }

func (h *h1Parser) feed(p []byte) {
	for len(p) > 0 {
		switch {
		case h.upgraded:
			h.up.feed(p)
			return
		case h.broken:
			h.c.add(lOther, len(p))
			return
		case !h.inBody:
			p = h.readHead(p)
		case h.chunked:
			p = h.readChunked(p)
		default:
			p = h.readBody(p)
		}
	}
}

func (h *h1Parser) readHead(p []byte) []byte {
	i := bytes.IndexByte(p, '\n')
	line := p
	if i >= 0 {
		line = p[:i+1]
	}
	if len(h.head)+len(line) > clientio.MaxHead { // the head's first maxHead bytes, whatever the chunks
		h.broken = true
		h.c.add(lH1Headers, clientio.MaxHead-len(h.head))
		h.c.add(lOther, len(h.head)+len(line)-clientio.MaxHead)
		return p[len(line):]
	}
	h.c.add(lH1Headers, len(line))
	h.head = append(h.head, line...)
	if i >= 0 && (bytes.HasSuffix(h.head, []byte("\r\n\r\n")) || bytes.HasSuffix(h.head, []byte("\n\n"))) {
		h.endHead()
	}
	return p[len(line):]
}

// endHead decides how the body of the message whose head is complete is
// delimited.
func (h *h1Parser) endHead() {
	head := h.head
	h.head = h.head[:0]
	lines := bytes.Split(head, []byte("\n"))
	status := 0
	if h.response {
		f := bytes.Fields(lines[0])
		if len(f) >= 2 {
			status, _ = strconv.Atoi(string(f[1]))
		}
		if status == 101 && h.up != nil {
			h.upgraded = true
			return
		}
		if status >= 100 && status < 200 {
			return // an interim response: the final head follows
		}
	}
	h.bodyLeft, h.chunked = 0, false
	if h.response {
		h.bodyLeft = -1
	}
	upgrade := false
	for _, l := range lines[1:] {
		name, val, ok := bytes.Cut(l, []byte(":"))
		if !ok {
			continue
		}
		val = bytes.TrimSpace(val)
		switch {
		case bytes.EqualFold(bytes.TrimSpace(name), []byte("Content-Length")):
			if n, err := strconv.ParseInt(string(val), 10, 64); err == nil && n >= 0 {
				h.bodyLeft = n
			}
		case bytes.EqualFold(bytes.TrimSpace(name), []byte("Transfer-Encoding")):
			h.chunked = bytes.Contains(bytes.ToLower(val), []byte("chunked"))
		case bytes.EqualFold(bytes.TrimSpace(name), []byte("Upgrade")):
			upgrade = true
		}
	}
	if status == 204 || status == 304 {
		h.bodyLeft, h.chunked = 0, false
	}
	if !h.response && upgrade && h.up != nil && h.bodyLeft == 0 && !h.chunked {
		// the client speaks the new protocol right after its request (it
		// may not wait for the 101)
		h.upgraded = true
		return
	}
	h.chunk = chunkState{}
	h.inBody = h.chunked || h.bodyLeft != 0
}

func (h *h1Parser) readBody(p []byte) []byte {
	n := int64(len(p))
	if h.bodyLeft >= 0 {
		n = min(n, h.bodyLeft)
		h.bodyLeft -= n
	}
	h.body.feed(p[:n])
	if h.bodyLeft == 0 {
		h.inBody = false
	}
	return p[n:]
}

// readChunked follows the chunked coding (RFC 9112 §7.1).
func (h *h1Parser) readChunked(p []byte) []byte {
	c := &h.chunk
	switch {
	case c.left > 0:
		n := min(int64(len(p)), c.left)
		h.body.feed(p[:n])
		c.left -= n
		if c.left == 0 {
			c.crlf = 2
		}
		return p[n:]
	case c.crlf > 0:
		n := min(c.crlf, len(p))
		h.c.add(lH1Framing, n)
		c.crlf -= n
		return p[n:]
	}
	// a size line, or a trailer line
	i := bytes.IndexByte(p, '\n')
	line := p
	if i >= 0 {
		line = p[:i+1]
	}
	if len(c.line)+len(line) > clientio.MaxHead { // as for heads: chunk-independent
		h.broken = true
		h.c.add(lH1Framing, clientio.MaxHead-len(c.line))
		h.c.add(lOther, len(c.line)+len(line)-clientio.MaxHead)
		return p[len(line):]
	}
	h.c.add(lH1Framing, len(line))
	c.line = append(c.line, line...)
	if i < 0 {
		return p[len(line):]
	}
	l := bytes.TrimRight(c.line, "\r\n")
	c.line = c.line[:0]
	if c.trailers {
		if len(l) == 0 {
			h.inBody = false
		}
		return p[len(line):]
	}
	hex, _, _ := bytes.Cut(l, []byte(";"))
	size, err := strconv.ParseInt(string(bytes.TrimSpace(hex)), 16, 64)
	if err != nil || size < 0 {
		h.broken = true
		return p[len(line):]
	}
	if size == 0 {
		c.trailers = true
	} else {
		c.left = size
	}
	return p[len(line):]
}

// wsParser splits WebSocket frames (RFC 6455 §5.2): the header, extended
// length and masking key are WS, the payload of data frames goes to inner
// (unmasked), control frames (close, ping, pong) are WS whole.
type wsParser struct {
	c      *layerCounts
	inner  parser
	hdr    [14]byte
	hdrN   int
	need   int // header bytes this frame has
	left   uint64
	mask   [4]byte
	masked bool
	moff   int
	ctrl   bool
	buf    []byte
}

func newWSParser(c *layerCounts, inner parser) *wsParser {
	return &wsParser{c: c, inner: inner, need: 2}
}

func (w *wsParser) feed(p []byte) {
	for len(p) > 0 {
		if w.hdrN < w.need {
			n := copy(w.hdr[w.hdrN:w.need], p)
			w.hdrN += n
			w.c.add(lWS, n)
			p = p[n:]
			if w.hdrN == w.need {
				w.header()
			}
			continue
		}
		n := int(min(uint64(len(p)), w.left))
		if w.ctrl {
			w.c.add(lWS, n)
		} else if w.masked {
			w.buf = append(w.buf[:0], p[:n]...)
			for i := range w.buf {
				w.buf[i] ^= w.mask[(w.moff+i)%4]
			}
			w.moff = (w.moff + n) % 4
			w.inner.feed(w.buf)
		} else {
			w.inner.feed(p[:n])
		}
		w.left -= uint64(n)
		p = p[n:]
		if w.left == 0 {
			w.reset()
		}
	}
}

// header reads as much of the frame header as is there, asking for the
// rest (extended length, mask) when the first two bytes say so.
func (w *wsParser) header() {
	if w.need == 2 {
		w.masked = w.hdr[1]&0x80 != 0
		switch w.hdr[1] & 0x7f {
		case 126:
			w.need += 2
		case 127:
			w.need += 8
		}
		if w.masked {
			w.need += 4
		}
		if w.need > 2 {
			return
		}
	}
	l := uint64(w.hdr[1] & 0x7f)
	off := 2
	switch l {
	case 126:
		l, off = uint64(binary.BigEndian.Uint16(w.hdr[2:4])), 4
	case 127:
		l, off = binary.BigEndian.Uint64(w.hdr[2:10])&(1<<63-1), 10
	}
	if w.masked {
		copy(w.mask[:], w.hdr[off:off+4])
	}
	w.left, w.moff, w.ctrl = l, 0, w.hdr[0]&0x08 != 0
	if w.left == 0 {
		w.reset()
	}
}

func (w *wsParser) reset() { w.hdrN, w.need = 0, 2 }
