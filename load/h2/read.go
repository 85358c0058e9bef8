package h2

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/wirebench/wirebench/load/clientio"
	"golang.org/x/net/http/httpguts"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// Reader reads the lean gRPC client's HTTP/2 frames (RFC 9113 §4, §6)
// in place, from a buffer of its own: a frame's payload is a slice of that
// buffer, valid until the next call, and a header block is decoded as it
// arrives into the few fields a gRPC reply needs (h2Head).
//
// Why not x/net's Framer, which the writing side still uses: it reads a
// frame with two io.ReadFull calls through the layers beneath it and
// allocates a frame, a header-field slice and an hpack callback per
// HEADERS frame; at one call at a time that was ~3 µs of the lean
// client's ~11 µs of user CPU per call (perf, 2026-11-26), which p50
// counts against gRPC (issue 17). And since frames are taken only whole,
// a read that stops on a deadline never cuts one in two: the connection
// stays usable whatever the moment.
//
// It validates what the Framer does: frame sizes, stream 0 or not, padding,
// frame order around CONTINUATION, settings' values, header field names
// and values, pseudo-header fields, and the header list size (maxHead).
// Connection errors end the connection (h2ConnError); a malformed header
// block is an http2.StreamError for its stream, after which reading goes
// on. FuzzH2Reader holds it to that.
type Reader struct {
	src  io.Reader
	buf  []byte // room for two frames of the largest size
	r, w int    // buf[r:w] is read and not yet taken
	dec  *hpack.Decoder
	head h2Head // the header block being decoded, or the last one
	cont uint32 // a HEADERS frame's stream awaiting CONTINUATION; 0: none
}

// h2MaxFrame is the largest frame payload the client accepts: the
// SETTINGS_MAX_FRAME_SIZE it leaves at its default (RFC 9113 §6.5.2).
const h2MaxFrame = 16384

// h2FramePriorityUpdate is RFC 9218's frame, which only clients send.
const h2FramePriorityUpdate http2.FrameType = 0x10

// h2Frame is one frame, its payload without padding or priority fields.
type h2Frame struct {
	typ    http2.FrameType
	flags  http2.Flags
	stream uint32
	length uint32 // as on the wire: what flow control counts
	data   []byte
}

// h2Head is a decoded header block: what the lean client reads of it.
type h2Head struct {
	stream      uint32
	endStream   bool
	hasStatus   bool
	status      string
	contentType string
	grpcStatus  string
	grpcMessage string
	truncated   bool   // over maxHead: the fields after are not kept
	size        uint32 // header list size so far (RFC 9113 §6.5.2)
	sawRegular  bool
	badPseudo   error // a pseudo-header field a reply must not have: a stream error at the block's end, as x/net's checkPseudos
	seen        uint8 // seenContentType and the like: a field's first value is kept
	invalid     error // a malformed field: a stream error once decoded
}

func NewReader(src io.Reader) *Reader {
	r := &Reader{src: src, buf: make([]byte, 2*(9+h2MaxFrame))}
	r.dec = hpack.NewDecoder(4096, r.emit) // the method value is made once
	r.dec.SetMaxStringLength(clientio.MaxHead)
	return r
}

// h2ConnError is a connection error (RFC 9113 §5.4.1).
type h2ConnError struct {
	code http2.ErrCode
	why  string
}

func (e *h2ConnError) Error() string { return "HTTP/2 " + e.code.String() + ": " + e.why }

func connErr(code http2.ErrCode, format string, a ...any) error {
	return &h2ConnError{code, fmt.Sprintf(format, a...)}
}

// next returns the next frame. A header block is returned once complete,
// as one HEADERS frame whose fields are in r.head. Errors: the source's,
// *h2ConnError, or http2.StreamError.
func (r *Reader) next() (h2Frame, error) {
	for {
		if r.w-r.r >= 9 {
			b := r.buf[r.r:r.w]
			length := uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2])
			if length > h2MaxFrame {
				return h2Frame{}, connErr(http2.ErrCodeFrameSize, "frame of %d bytes, over SETTINGS_MAX_FRAME_SIZE %d", length, h2MaxFrame)
			}
			if len(b) >= 9+int(length) {
				f := h2Frame{
					typ: http2.FrameType(b[3]), flags: http2.Flags(b[4]),
					stream: binary.BigEndian.Uint32(b[5:9]) & (1<<31 - 1),
					length: length, data: b[9 : 9+length],
				}
				r.r += 9 + int(length)
				done, err := r.parse(&f)
				if err != nil {
					return h2Frame{}, err
				}
				if done {
					return f, nil
				}
				continue
			}
		}
		if err := r.fill(); err != nil {
			return h2Frame{}, err
		}
	}
}

// fill reads more from the source, first making room for a whole frame.
func (r *Reader) fill() error {
	if r.r == r.w {
		r.r, r.w = 0, 0
	} else if len(r.buf)-r.r < 9+h2MaxFrame {
		r.w = copy(r.buf, r.buf[r.r:r.w])
		r.r = 0
	}
	k, err := r.src.Read(r.buf[r.w:])
	r.w += k
	switch {
	case k > 0:
		return nil // the error, if any, comes again with the next read
	case err == nil:
		return io.ErrNoProgress
	}
	return err
}

// parse checks f and strips its padding; false for a frame that is not
// returned (a header block's fragment before its end).
func (r *Reader) parse(f *h2Frame) (bool, error) {
	if r.cont != 0 && (f.typ != http2.FrameContinuation || f.stream != r.cont) {
		return false, connErr(http2.ErrCodeProtocol, "%v frame where stream %d's CONTINUATION was due", f.typ, r.cont)
	}
	var err error
	switch f.typ {
	case http2.FrameData:
		if f.stream == 0 {
			return false, connErr(http2.ErrCodeProtocol, "DATA on stream 0")
		}
		f.data, err = unpad(f)
	case http2.FrameHeaders:
		if f.stream == 0 {
			return false, connErr(http2.ErrCodeProtocol, "HEADERS on stream 0")
		}
		p, pad := f.data, 0
		if f.flags.Has(http2.FlagHeadersPadded) {
			if len(p) == 0 {
				return false, connErr(http2.ErrCodeProtocol, "HEADERS frame's padding exceeds its length")
			}
			pad, p = int(p[0]), p[1:]
		}
		if f.flags.Has(http2.FlagHeadersPriority) {
			if len(p) < 5 {
				return false, connErr(http2.ErrCodeFrameSize, "HEADERS too short for its priority fields")
			}
			p = p[5:]
		}
		if pad > len(p) {
			return false, connErr(http2.ErrCodeProtocol, "HEADERS frame's padding exceeds its length")
		}
		f.data = p[:len(p)-pad]
		r.head = h2Head{stream: f.stream, endStream: f.flags.Has(http2.FlagHeadersEndStream)}
		return r.fragment(f)
	case http2.FrameContinuation:
		if r.cont == 0 {
			return false, connErr(http2.ErrCodeProtocol, "CONTINUATION without HEADERS")
		}
		f.flags &^= http2.FlagHeadersEndStream // END_STREAM is the HEADERS frame's
		return r.fragment(f)
	case http2.FramePriority:
		switch {
		case f.stream == 0:
			return false, connErr(http2.ErrCodeProtocol, "PRIORITY on stream 0")
		case f.length != 5:
			return false, connErr(http2.ErrCodeFrameSize, "PRIORITY of %d bytes", f.length)
		}
		return false, nil // nothing to act on
	case http2.FrameRSTStream:
		if f.length != 4 {
			return false, connErr(http2.ErrCodeFrameSize, "RST_STREAM of %d bytes", f.length)
		}
		if f.stream == 0 {
			return false, connErr(http2.ErrCodeProtocol, "RST_STREAM on stream 0")
		}
	case http2.FrameSettings:
		err = checkSettings(f)
	case http2.FramePushPromise:
		err = connErr(http2.ErrCodeProtocol, "PUSH_PROMISE after SETTINGS_ENABLE_PUSH=0")
	case http2.FramePing:
		switch {
		case f.length != 8:
			err = connErr(http2.ErrCodeFrameSize, "PING of %d bytes", f.length)
		case f.stream != 0:
			err = connErr(http2.ErrCodeProtocol, "PING on stream %d", f.stream)
		}
	case http2.FrameGoAway:
		switch {
		case f.length < 8:
			err = connErr(http2.ErrCodeFrameSize, "GOAWAY of %d bytes", f.length)
		case f.stream != 0:
			err = connErr(http2.ErrCodeProtocol, "GOAWAY on stream %d", f.stream)
		}
	case http2.FrameWindowUpdate:
		if f.length != 4 {
			return false, connErr(http2.ErrCodeFrameSize, "WINDOW_UPDATE of %d bytes", f.length)
		}
		if windowIncrement(f) == 0 {
			if f.stream == 0 {
				return false, connErr(http2.ErrCodeProtocol, "WINDOW_UPDATE of 0 on the connection")
			}
			return false, http2.StreamError{StreamID: f.stream, Code: http2.ErrCodeProtocol, Cause: errors.New("WINDOW_UPDATE of 0")}
		}
	case h2FramePriorityUpdate:
		err = connErr(http2.ErrCodeProtocol, "PRIORITY_UPDATE from a server (RFC 9218 §7.1)")
	default:
		return false, nil // unknown types are ignored (RFC 9113 §4.1)
	}
	return err == nil, err
}

// unpad strips a PADDED DATA frame's padding.
func unpad(f *h2Frame) ([]byte, error) {
	if !f.flags.Has(http2.FlagDataPadded) {
		return f.data, nil
	}
	if len(f.data) == 0 || int(f.data[0]) >= len(f.data) {
		return nil, connErr(http2.ErrCodeProtocol, "%v frame's padding exceeds its length", f.typ)
	}
	return f.data[1 : len(f.data)-int(f.data[0])], nil
}

func windowIncrement(f *h2Frame) uint32 {
	return binary.BigEndian.Uint32(f.data) & (1<<31 - 1)
}

// checkSettings checks a SETTINGS frame (RFC 9113 §6.5).
func checkSettings(f *h2Frame) error {
	switch {
	case f.stream != 0:
		return connErr(http2.ErrCodeProtocol, "SETTINGS on stream %d", f.stream)
	case f.flags.Has(http2.FlagSettingsAck) && f.length != 0:
		return connErr(http2.ErrCodeFrameSize, "SETTINGS ack of %d bytes", f.length)
	case f.length%6 != 0:
		return connErr(http2.ErrCodeFrameSize, "SETTINGS of %d bytes, not a multiple of 6", f.length)
	}
	return eachSetting(f.data, func(st http2.Setting) error {
		if err := st.Valid(); err != nil {
			var ce http2.ConnectionError
			code := http2.ErrCodeProtocol
			if errors.As(err, &ce) {
				code = http2.ErrCode(ce)
			}
			return connErr(code, "setting %v", st)
		}
		return nil
	})
}

// eachSetting calls fn with each of a SETTINGS payload's settings.
func eachSetting(p []byte, fn func(http2.Setting) error) error {
	for ; len(p) >= 6; p = p[6:] {
		if err := fn(http2.Setting{ID: http2.SettingID(binary.BigEndian.Uint16(p)), Val: binary.BigEndian.Uint32(p[2:])}); err != nil {
			return err
		}
	}
	return nil
}

// fragment decodes a HEADERS or CONTINUATION frame's part of a header
// block; true once the block is complete.
func (r *Reader) fragment(f *h2Frame) (bool, error) {
	h := &r.head
	if h.invalid != nil || h.truncated && len(f.data) > 0 {
		// As x/net: past the limit or a bad field, no more is decoded.
		return false, connErr(http2.ErrCodeProtocol, "header block continued after it was refused")
	}
	if int64(len(f.data)) > 2*int64(clientio.MaxHead-h.size) {
		return false, connErr(http2.ErrCodeProtocol, "header list over %d bytes", clientio.MaxHead)
	}
	r.dec.SetEmitEnabled(true)
	if _, err := r.dec.Write(f.data); err != nil {
		return false, connErr(http2.ErrCodeCompression, "%v", err)
	}
	if !f.flags.Has(http2.FlagHeadersEndHeaders) {
		r.cont = f.stream
		return false, nil
	}
	r.cont = 0
	if err := r.dec.Close(); err != nil {
		return false, connErr(http2.ErrCodeCompression, "%v", err)
	}
	if h.invalid != nil {
		return false, http2.StreamError{StreamID: h.stream, Code: http2.ErrCodeProtocol, Cause: h.invalid}
	}
	if h.badPseudo != nil {
		return false, http2.StreamError{StreamID: h.stream, Code: http2.ErrCodeProtocol, Cause: h.badPseudo}
	}
	f.typ, f.stream = http2.FrameHeaders, h.stream
	return true, nil
}

// emit takes one decoded header field into r.head.
func (r *Reader) emit(hf hpack.HeaderField) {
	h := &r.head
	switch {
	case !httpguts.ValidHeaderFieldValue(hf.Value):
		h.invalid = fmt.Errorf("invalid value of header field %q", hf.Name)
	case strings.HasPrefix(hf.Name, ":"):
		switch {
		case h.sawRegular:
			h.invalid = fmt.Errorf("pseudo-header field %q after a regular field", hf.Name)
		case h.badPseudo != nil:
		case hf.Name != ":status":
			h.badPseudo = fmt.Errorf("pseudo-header field %q in a response", hf.Name)
		case h.hasStatus:
			h.badPseudo = errors.New("duplicate :status")
		}
	default:
		h.sawRegular = true
		if !validWireName(hf.Name) {
			h.invalid = fmt.Errorf("invalid header field name %q", hf.Name)
		}
	}
	if h.invalid != nil {
		r.dec.SetEmitEnabled(false)
		return
	}
	size := hf.Size()
	if size > clientio.MaxHead-h.size {
		h.truncated, h.size = true, clientio.MaxHead
		r.dec.SetEmitEnabled(false)
		return
	}
	h.size += size
	switch hf.Name {
	case ":status":
		h.hasStatus, h.status = true, hf.Value
	case "content-type":
		h.first(seenContentType, &h.contentType, hf.Value)
	case "grpc-status":
		h.first(seenGRPCStatus, &h.grpcStatus, hf.Value)
	case "grpc-message":
		h.first(seenGRPCMessage, &h.grpcMessage, hf.Value)
	}
}

const (
	seenContentType = 1 << iota
	seenGRPCStatus
	seenGRPCMessage
)

// first keeps a field's first value.
func (h *h2Head) first(bit uint8, dst *string, v string) {
	if h.seen&bit == 0 {
		h.seen |= bit
		*dst = v
	}
}

// validWireName: a token in lower case (RFC 9113 §8.2.1).
func validWireName(v string) bool {
	if v == "" {
		return false
	}
	for _, c := range v {
		if !httpguts.IsTokenRune(c) || 'A' <= c && c <= 'Z' {
			return false
		}
	}
	return true
}
