package h2

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/wirebench/wirebench/load/clientio"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// h2Seeds are frame sequences for FuzzH2Reader: a reply, each kind of
// frame, and each error h2Reader must report as x/net's Framer does.
func h2Seeds() [][]byte {
	var seeds [][]byte
	add := func(write func(fr *http2.Framer, hb *bytes.Buffer, he *hpack.Encoder)) {
		var b, hb bytes.Buffer
		write(http2.NewFramer(&b, nil), &hb, hpack.NewEncoder(&hb))
		seeds = append(seeds, b.Bytes())
	}
	raw := func(typ http2.FrameType, flags http2.Flags, stream uint32, payload ...byte) {
		add(func(fr *http2.Framer, _ *bytes.Buffer, _ *hpack.Encoder) {
			fr.WriteRawFrame(typ, flags, stream, payload)
		})
	}
	block := func(kv ...string) []byte {
		var hb bytes.Buffer
		he := hpack.NewEncoder(&hb)
		for i := 0; i < len(kv); i += 2 {
			he.WriteField(hpack.HeaderField{Name: kv[i], Value: kv[i+1]})
		}
		return hb.Bytes()
	}
	add(func(fr *http2.Framer, hb *bytes.Buffer, he *hpack.Encoder) {
		fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 100}, http2.Setting{ID: http2.SettingHeaderTableSize, Val: 0})
		fr.WriteSettingsAck()
		fr.WriteWindowUpdate(0, 1000)
		fr.WritePing(false, [8]byte{1, 2, 3})
		replyUser(fr, hb, he, 1, 7)
		replyUser(fr, hb, he, 3, 8) // the second reply indexes the first's fields
		fr.WriteRSTStream(5, http2.ErrCodeCancel)
		fr.WriteGoAway(3, http2.ErrCodeNo, []byte("bye"))
	})
	add(func(fr *http2.Framer, _ *bytes.Buffer, _ *hpack.Encoder) { // padded and prioritised
		fr.WriteDataPadded(1, false, []byte("abc"), []byte{0, 0})
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block(":status", "200"), EndHeaders: true, PadLength: 3,
			Priority: http2.PriorityParam{StreamDep: 3, Weight: 9}})
		fr.WritePriority(1, http2.PriorityParam{Weight: 1})
		fr.WriteRawFrame(0x42, 0, 1, []byte("unknown type"))
	})
	add(func(fr *http2.Framer, _ *bytes.Buffer, _ *hpack.Encoder) { // a block in three frames
		b := block(":status", "200", "content-type", "application/grpc", "grpc-status", "3", "grpc-message", "bad%20thing", "x-long", strings.Repeat("v", 100))
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: b[:10], EndStream: true})
		fr.WriteContinuation(1, false, b[10:20])
		fr.WriteContinuation(1, true, b[20:])
	})
	add(func(fr *http2.Framer, _ *bytes.Buffer, _ *hpack.Encoder) { // CONTINUATION interrupted
		b := block(":status", "200")
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: b})
		fr.WriteData(1, true, nil)
	})
	for _, kv := range [][]string{
		{"content-type", "a", ":status", "200"}, // pseudo after regular
		{":path", "/"},                          // a request's pseudo field
		{":status", "200", ":status", "204"},    // duplicate
		{"Upper", "x"},                          // not lower case
		{"x", "a\x00b"},                         // invalid value
		{"content-type", "", "content-type", "application/grpc"},
		{"a-A", "x"}, {"z-Z", "x"}, {"a-@", "x"}, {"a-[", "x"}, // the ends of upper case, and beside them
	} {
		add(func(fr *http2.Framer, hb *bytes.Buffer, he *hpack.Encoder) {
			fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block(kv...), EndHeaders: true})
			fr.WriteData(1, true, []byte("read on"))
		})
	}
	raw(http2.FrameData, 0, 0, 'x')                                  // stream 0
	raw(http2.FrameData, http2.FlagDataPadded, 1, 5, 'x')            // padding beyond the frame
	raw(http2.FrameData, http2.FlagDataPadded, 1)                    // no pad length
	raw(http2.FrameData, http2.FlagDataPadded, 1, 1)                 // padding of the frame's length
	raw(http2.FrameData, http2.FlagDataPadded, 1, 1, 'x')            // all padding: no data
	raw(http2.FrameHeaders, http2.FlagHeadersPadded|4, 1, 1, 0)      // all padding: an empty block
	raw(http2.FrameHeaders, http2.FlagHeadersPadded|4, 1, 2, 0)      // padding beyond the frame
	raw(http2.FrameHeaders, http2.FlagHeadersEndHeaders, 0, 0x88)    // stream 0
	raw(http2.FrameHeaders, http2.FlagHeadersPriority|4, 1, 0, 0, 0) // short priority
	raw(http2.FrameHeaders, http2.FlagHeadersEndHeaders, 1, 0xff)    // bad hpack
	raw(http2.FrameHeaders, http2.FlagHeadersEndHeaders, 1, 0x7f)    // block ends mid-field
	raw(http2.FrameContinuation, http2.FlagHeadersEndHeaders, 1, 0x88)
	raw(http2.FramePriority, 0, 0, 0, 0, 0, 0, 1)
	raw(http2.FramePriority, 0, 1, 0, 0, 0)
	raw(http2.FrameRSTStream, 0, 1, 0, 0, 0)
	raw(http2.FrameRSTStream, 0, 0, 0, 0, 0, 8)
	raw(http2.FrameSettings, 0, 1)
	raw(http2.FrameSettings, http2.FlagSettingsAck, 0, 0, 0, 0, 0, 0, 0)
	raw(http2.FrameSettings, 0, 0, 0, 1, 0)
	raw(http2.FrameSettings, 0, 0, 0, 2, 0, 0, 0, 2)                        // ENABLE_PUSH=2
	raw(http2.FrameSettings, 0, 0, 0, 4, 0x80, 0, 0, 0)                     // window over 2^31-1
	raw(http2.FrameSettings, 0, 0, 0, 5, 0, 0, 0, 1)                        // frame size under 16384
	raw(http2.FramePushPromise, http2.FlagHeadersEndHeaders, 1, 0, 0, 0, 2) // push
	raw(http2.FramePing, 0, 0, 1, 2, 3)
	raw(http2.FramePing, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8)
	raw(http2.FrameGoAway, 0, 0, 0, 0, 0)
	raw(http2.FrameGoAway, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0)
	raw(http2.FrameWindowUpdate, 0, 0, 0, 0, 1)
	raw(http2.FrameWindowUpdate, 0, 0, 0, 0, 0, 0)
	raw(http2.FrameWindowUpdate, 0, 1, 0x80, 0, 0, 0)           // 0 on a stream: a stream error
	seeds = append(seeds, []byte{0, 0x40, 1, 0, 0, 0, 0, 0, 1}) // over SETTINGS_MAX_FRAME_SIZE
	return seeds
}

// FuzzH2Reader holds h2Reader to x/net's Framer, configured as the lean
// client configured it before (MaxHeaderListSize maxHead, the default
// frame size): whatever a server sends, the same frames with the same
// contents, and an error where the Framer has one, a stream error where
// it has one. Where they differ by design, ours is stricter (a request's
// pseudo-header field in a reply, PUSH_PROMISE, PRIORITY_UPDATE, settings' values, which
// the Framer leaves to its transport) or skips (PRIORITY, unknown types).
func FuzzH2Reader(f *testing.F) {
	for _, s := range h2Seeds() {
		f.Add(s)
	}
	f.Fuzz(diffH2)
}

// diffH2 reads b with h2Reader and with x/net's Framer and fails t where
// they differ (FuzzH2Reader).
func diffH2(t *testing.T, b []byte) {
	{
		ours := NewReader(iotest.OneByteReader(bytes.NewReader(b))) // frames in pieces: fill's work
		fr := http2.NewFramer(nil, bytes.NewReader(b))
		fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
		fr.MaxHeaderListSize = clientio.MaxHead
		fr.SetMaxReadFrameSize(h2MaxFrame)
		for i := 0; ; i++ {
			var xf http2.Frame
			var xerr error
			for {
				xf, xerr = fr.ReadFrame()
				switch xf.(type) {
				case *http2.PriorityFrame, *http2.UnknownFrame:
					continue
				}
				break
			}
			of, oerr := ours.next()
			switch xf.(type) {
			case *http2.PushPromiseFrame, *http2.PriorityUpdateFrame:
				if xerr == nil {
					if oerr == nil {
						t.Fatalf("frame %d: %T accepted", i, xf)
					}
					return
				}
			}
			if sf, ok := xf.(*http2.SettingsFrame); ok && xerr == nil && sf.ForeachSetting(http2.Setting.Valid) != nil {
				if oerr == nil { // x/net leaves values to its transport
					t.Fatalf("frame %d: invalid SETTINGS accepted", i)
				}
				return
			}
			if mh, ok := xf.(*http2.MetaHeadersFrame); ok && xerr == nil && hasRequestPseudo(mh) {
				var se http2.StreamError
				if !errors.As(oerr, &se) || se.StreamID != mh.StreamID {
					t.Fatalf("frame %d: a request's pseudo-header field in a reply: %v, want a stream error", i, oerr)
				}
				continue
			}
			if (xerr == nil) != (oerr == nil) {
				t.Fatalf("frame %d: x/net %v (%T), ours %v (%v)", i, xerr, xf, oerr, of.typ)
			}
			if xerr != nil {
				var xse, ose http2.StreamError
				xs, os := errors.As(xerr, &xse), errors.As(oerr, &ose)
				if xs && !os && strings.Contains(oerr.Error(), "HEADERS frame's padding exceeds") {
					return // a connection error (RFC 9113 §6.2): x/net makes it the stream's
				}
				if xs != os || xse.StreamID != ose.StreamID {
					t.Fatalf("frame %d: x/net %v, ours %v: not the same kind of error", i, xerr, oerr)
				}
				if xs {
					continue // both read on
				}
				if xerr == io.EOF && oerr != io.EOF {
					t.Fatalf("frame %d: clean end, ours %v", i, oerr)
				}
				return
			}
			sameFrame(t, i, xf, &of, &ours.head)
		}
	}
}

func hasRequestPseudo(mh *http2.MetaHeadersFrame) bool {
	for _, f := range mh.PseudoFields() {
		if f.Name != ":status" {
			return true
		}
	}
	return false
}

func sameFrame(t *testing.T, i int, xf http2.Frame, of *h2Frame, head *h2Head) {
	t.Helper()
	h := xf.Header()
	if h.Type != of.typ || h.StreamID != of.stream {
		t.Fatalf("frame %d: x/net %v on %d, ours %v on %d", i, h.Type, h.StreamID, of.typ, of.stream)
	}
	switch xf := xf.(type) {
	case *http2.DataFrame:
		if !bytes.Equal(xf.Data(), of.data) || xf.Length != of.length || xf.StreamEnded() != of.flags.Has(http2.FlagDataEndStream) {
			t.Fatalf("frame %d: DATA %q (%d, end %v), ours %q (%d, %v)", i, xf.Data(), xf.Length, xf.StreamEnded(), of.data, of.length, of.flags)
		}
	case *http2.MetaHeadersFrame:
		want := h2Head{stream: xf.StreamID, endStream: xf.StreamEnded(), truncated: xf.Truncated, status: xf.PseudoValue("status"),
			contentType: metaValue(xf, "content-type"), grpcStatus: metaValue(xf, "grpc-status"), grpcMessage: metaValue(xf, "grpc-message")}
		got := h2Head{stream: head.stream, endStream: head.endStream, truncated: head.truncated, status: head.status,
			contentType: head.contentType, grpcStatus: head.grpcStatus, grpcMessage: head.grpcMessage}
		if want != got {
			t.Fatalf("frame %d: headers\n x/net %+v\n ours  %+v", i, want, got)
		}
		if _, has := pseudo(xf, ":status"); has != head.hasStatus {
			t.Fatalf("frame %d: :status present %v, ours %v", i, has, head.hasStatus)
		}
	case *http2.RSTStreamFrame:
		if uint32(xf.ErrCode) != beUint32(of.data) {
			t.Fatalf("frame %d: RST_STREAM %v, ours %x", i, xf.ErrCode, of.data)
		}
	case *http2.SettingsFrame:
		var want, got []http2.Setting
		xf.ForeachSetting(func(s http2.Setting) error { want = append(want, s); return nil })
		eachSetting(of.data, func(s http2.Setting) error { got = append(got, s); return nil })
		if xf.IsAck() != of.flags.Has(http2.FlagSettingsAck) || len(want) != len(got) {
			t.Fatalf("frame %d: SETTINGS %v (ack %v), ours %v (%v)", i, want, xf.IsAck(), got, of.flags)
		}
		for k := range want {
			if want[k] != got[k] {
				t.Fatalf("frame %d: SETTINGS %v, ours %v", i, want, got)
			}
		}
	case *http2.PingFrame:
		if !bytes.Equal(xf.Data[:], of.data) || xf.IsAck() != of.flags.Has(http2.FlagPingAck) {
			t.Fatalf("frame %d: PING %x, ours %x", i, xf.Data, of.data)
		}
	case *http2.GoAwayFrame:
		if xf.LastStreamID != beUint32(of.data)&(1<<31-1) {
			t.Fatalf("frame %d: GOAWAY last stream %d, ours %x", i, xf.LastStreamID, of.data)
		}
	case *http2.WindowUpdateFrame:
		if xf.Increment != windowIncrement(of) {
			t.Fatalf("frame %d: WINDOW_UPDATE %d, ours %d", i, xf.Increment, windowIncrement(of))
		}
	default:
		t.Fatalf("frame %d: x/net returned a %T", i, xf)
	}
}

func pseudo(mh *http2.MetaHeadersFrame, name string) (string, bool) {
	for _, f := range mh.PseudoFields() {
		if f.Name == name {
			return f.Value, true
		}
	}
	return "", false
}

func beUint32(b []byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// TestH2ReaderKeepsPartialFrames: a read that stops (a deadline) with part
// of a frame read loses nothing: the next call returns the frame whole.
func TestH2ReaderKeepsPartialFrames(t *testing.T) {
	var b bytes.Buffer
	http2.NewFramer(&b, nil).WriteData(1, true, []byte("payload"))
	frame := b.Bytes()
	src := &stutter{chunks: [][]byte{frame[:4], nil, frame[4:12], nil, frame[12:]}}
	r := NewReader(src)
	for _, wantErr := range []bool{true, true} {
		if _, err := r.next(); (err != nil) != wantErr || err != nil && !errors.Is(err, errStutter) {
			t.Fatalf("next: %v, want the source's error", err)
		}
	}
	f, err := r.next()
	if err != nil || string(f.data) != "payload" || f.stream != 1 || !f.flags.Has(http2.FlagDataEndStream) {
		t.Fatalf("after two stops: %+v, %v", f, err)
	}
}

var errStutter = errors.New("stutter: a deadline")

// stutter returns its chunks one per Read, a nil chunk as errStutter.
type stutter struct{ chunks [][]byte }

func (s *stutter) Read(p []byte) (int, error) {
	if len(s.chunks) == 0 {
		return 0, io.EOF
	}
	c := s.chunks[0]
	s.chunks = s.chunks[1:]
	if c == nil {
		return 0, errStutter
	}
	return copy(p, c), nil
}

// TestH2ReaderHeaderLimit: a header list of exactly maxHead bytes is
// kept, one byte more truncates it (RFC 9113 §6.5.2's size: name, value
// and 32 per field), a truncated block may end with an empty CONTINUATION
// but not a CONTINUATION with more; all as x/net's Framer (diffH2).
func TestH2ReaderHeaderLimit(t *testing.T) {
	// :status, then fields of at most 16,384 bytes up to maxHead+extra
	block := func(extra int) []byte {
		var hb bytes.Buffer
		he := hpack.NewEncoder(&hb)
		he.SetMaxDynamicTableSizeLimit(0) // literals only
		he.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
		left := clientio.MaxHead + extra - (len(":status") + len("200") + 32)
		for i := 0; left > 0; i++ {
			name := fmt.Sprintf("x-%03d", i)
			size := min(16384, left)
			if left-size > 0 && left-size < 64 {
				size = left / 2 // leave the last field room for its name
			}
			he.WriteField(hpack.HeaderField{Name: name, Value: strings.Repeat("v", size-len(name)-32)})
			left -= size
		}
		return hb.Bytes()
	}
	frames := func(b []byte, tail ...[]byte) []byte {
		var out bytes.Buffer
		fr := http2.NewFramer(&out, nil)
		fr.WriteSettings()
		first := true
		for len(b) > 0 {
			n := min(len(b), h2MaxFrame)
			end := n == len(b) && len(tail) == 0
			if first {
				fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: b[:n], EndHeaders: end, EndStream: true})
				first = false
			} else {
				fr.WriteContinuation(1, end, b[:n])
			}
			b = b[n:]
		}
		for i, p := range tail {
			fr.WriteContinuation(1, i == len(tail)-1, p)
		}
		fr.WritePing(false, [8]byte{1})
		return out.Bytes()
	}
	for _, tc := range []struct {
		name      string
		in        []byte
		truncated bool
		err       bool
	}{
		{"exactly the limit", frames(block(0)), false, false},
		{"one byte over", frames(block(1)), true, false},
		{"over, then an empty CONTINUATION", frames(block(1), []byte{}), true, false},
		{"over, then more", frames(block(1), []byte{0x88}), false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			diffH2(t, tc.in)
			r := NewReader(bytes.NewReader(tc.in))
			r.next() // SETTINGS
			f, err := r.next()
			if tc.err {
				var ce *h2ConnError
				if !errors.As(err, &ce) {
					t.Fatalf("got %v, want a connection error", err)
				}
				return
			}
			if err != nil || f.typ != http2.FrameHeaders || r.head.truncated != tc.truncated || r.head.status != "200" {
				t.Fatalf("got %v %v, truncated %v, status %q; want truncated %v", f.typ, err, r.head.truncated, r.head.status, tc.truncated)
			}
			if !tc.truncated && r.head.size != clientio.MaxHead {
				t.Fatalf("header list of %d bytes, want exactly %d", r.head.size, clientio.MaxHead)
			}
			if f, err := r.next(); err != nil || f.typ != http2.FramePing {
				t.Fatalf("after the block: %v, %v; want the PING", f.typ, err)
			}
		})
	}
}
