package results

// Layers are the bytes of one direction of one or more connections, split
// by layer. Message is the application payload (a protobuf message, a JSON
// record or array); Envelope the per-message framing inside a body (the
// 5-byte length prefix of gRPC, gRPC-Web and Connect streams, gRPC-Web
// trailer frames, NDJSON newlines, SSE "data:" lines); H2Frames the HTTP/2
// connection preface, the 9-byte frame headers, padding and the payloads of
// control frames (SETTINGS, WINDOW_UPDATE, PING, RST_STREAM, GOAWAY,
// PRIORITY); H2Headers the HPACK blocks of HEADERS and CONTINUATION; WS the
// WebSocket frame headers (masking keys included) and control frames;
// H1Headers the HTTP/1.1 start lines and header blocks; H1Framing chunked
// transfer coding (size lines, CRLFs, the last chunk and trailers).
// Over HTTP/3 (load/h3) the socket's bytes are UDP payloads: QUIC is the
// packets' own cost (headers, AEAD tags, ACK, CRYPTO, PADDING and other
// non-STREAM frames, STREAM frame headers, STREAM data sent again);
// H3Frames the HTTP/3 frame headers, control frames and stream-type
// varints; QPACK the header blocks; Message the body (DATA payloads).
type Layers struct {
	Message   int64 `json:"message"`
	Envelope  int64 `json:"envelope"`
	H2Frames  int64 `json:"h2_frames"`
	H2Headers int64 `json:"h2_headers"`
	WS        int64 `json:"ws_frames"`
	H1Headers int64 `json:"h1_headers"`
	H1Framing int64 `json:"h1_framing"`
	QUIC      int64 `json:"quic,omitempty"`
	H3Frames  int64 `json:"h3_frames,omitempty"`
	QPACK     int64 `json:"h3_headers,omitempty"`
	Other     int64 `json:"other,omitempty"`
}

// Total is the bytes on the socket.
func (l Layers) Total() int64 {
	return l.Message + l.Envelope + l.H2Frames + l.H2Headers + l.WS + l.H1Headers + l.H1Framing + l.QUIC + l.H3Frames + l.QPACK + l.Other
}

// Add sums two splits.
func (l Layers) Add(o Layers) Layers {
	return Layers{
		Message: l.Message + o.Message, Envelope: l.Envelope + o.Envelope, H2Frames: l.H2Frames + o.H2Frames,
		H2Headers: l.H2Headers + o.H2Headers, WS: l.WS + o.WS, H1Headers: l.H1Headers + o.H1Headers,
		H1Framing: l.H1Framing + o.H1Framing, QUIC: l.QUIC + o.QUIC, H3Frames: l.H3Frames + o.H3Frames,
		QPACK: l.QPACK + o.QPACK, Other: l.Other + o.Other,
	}
}

// Split is the bytes of a run by layer, received and sent.
type Split struct {
	In  Layers `json:"in"`
	Out Layers `json:"out"`
}
