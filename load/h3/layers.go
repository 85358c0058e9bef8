package h3

import (
	"errors"
	"fmt"
	"sync/atomic"

	h3qlog "github.com/quic-go/quic-go/http3/qlog"
	"github.com/quic-go/quic-go/qlog"
	"github.com/quic-go/quic-go/qlogwriter"
	"github.com/quic-go/quic-go/quicvarint"

	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// Bytes by layer inside QUIC, counted from the events quic-go and its
// http3 package emit as they build and parse packets and frames (their
// qlog trace, consumed here as typed values, never encoded):
//
//	UDP payload = QUIC + HTTP/3 frames + QPACK + body (+ unattributed)
//
//   - QUIC: every packet's full length (header, frames, AEAD tag; coalesced
//     packets each; packets dropped on receipt whole) minus the STREAM data
//     it carried for the first time: packet headers, ACK, CRYPTO (the TLS
//     handshake), PADDING and every other non-STREAM frame, the STREAM
//     frames' own headers, and STREAM data sent or received again
//     (retransmissions, duplicates).
//   - HTTP/3 frames: the frame type and length varints of HEADERS and DATA,
//     whole control frames (SETTINGS, GOAWAY, …) and the stream-type
//     varints that open the control and QPACK streams.
//   - QPACK: the HEADERS frames' payloads (the header blocks).
//   - body: the DATA frames' payloads.
//
// The STREAM data counted first-time by the packet events is exactly what
// the HTTP/3 layer above wrote or read, so StreamData must equal
// H3Frames + QPACK + Body; and the packets must add up to the datagrams
// the socket counted. Layers reports both differences (Check), and the
// tests hold them to zero.
//
// Because that identity holds, a split needs no packet events: QUIC is
// then the socket's bytes minus the three HTTP/3 layers. That is the
// default (a Pool without CheckLayers): the connection's trace gives
// quic-go's connection no recorder, so quic-go builds no event per packet
// and per ACK (its frames converted, ACK ranges cloned: most of what a
// split cost the client, 17 of its 26 allocations per request), and only
// http3's frame events are counted. What that mode cannot do is check
// itself: the packet events are what Check compares, so with them off
// it only refuses a QUIC layer below zero. One figure can differ from the
// checked split: our control stream's type and SETTINGS (a few bytes per
// connection) are counted when http3 logs them, just before its goroutine
// writes them, not when a packet carries them; a connection closed in
// between (right after it opened) would move those bytes from QUIC to
// HTTP/3 frames.
//
// A frame is counted when http3 logs it: a sent frame just before it is
// written, a received one as its header is parsed (a DATA frame's whole
// payload then, which the load client always reads to its end). The one
// exception is our control stream (its type and SETTINGS): http3 writes it
// from a goroutine of its own that nothing waits for, so a connection can
// close between the log and the write, or before a packet carried it;
// its bytes count as HTTP/3 frames when a packet carries them, so they
// are counted only if they reached the wire.

// dirCounts is one direction's counters.
type dirCounts struct {
	packets    atomic.Int64 // full QUIC packet lengths
	streamData atomic.Int64 // STREAM frame data carried for the first time
	h3Frames   atomic.Int64
	qpack      atomic.Int64
	body       atomic.Int64
}

// LayerCounts splits the UDP payload of a Pool's connections by layer,
// per direction. It is safe for concurrent use.
type LayerCounts struct {
	in, out dirCounts
	// teardown is what the sockets carried once their connection began
	// to close (packetconn.go).
	teardown measure.Bytes
	// packets: count quic-go's packet events too (Pool.CheckLayers), so
	// that Check can compare; set before the first connection.
	packets bool
}

// Layers is the split so far. socketIn and socketOut are the datagram
// payloads the socket counted: what the events do not account for goes to
// Other (zero when every byte is counted once; negative if one were
// counted twice).
//
// One share of QUIC is not in any event: datagrams quic-go reads once a
// connection is closing and discards without logging them (packets queued
// when it closed, late ACKs, the CONNECTION_CLOSE it repeats to them).
// They are the socket's bytes minus the logged packets, and are QUIC's
// only if the socket carried at least that much after the connection
// began to close (teardown); otherwise the difference stays in Other.
func (l *LayerCounts) Layers(socketIn, socketOut int64) (in, out results.Layers) {
	return l.in.layers(socketIn, l.teardown.In.Load(), l.packets), l.out.layers(socketOut, l.teardown.Out.Load(), l.packets)
}

func (d *dirCounts) layers(socket, teardown int64, packets bool) results.Layers {
	if !packets { // the HTTP/3 layers counted, QUIC the rest (the default)
		r := results.Layers{H3Frames: d.h3Frames.Load(), QPACK: d.qpack.Load(), Message: d.body.Load()}
		r.QUIC = socket - r.H3Frames - r.QPACK - r.Message
		return r
	}
	r := results.Layers{
		QUIC:     d.packets.Load() - d.streamData.Load(),
		H3Frames: d.h3Frames.Load(),
		QPACK:    d.qpack.Load(),
		Message:  d.body.Load(),
	}
	if unlogged := socket - d.packets.Load(); unlogged >= 0 && unlogged <= teardown {
		r.QUIC += unlogged
	} else {
		r.Other = unlogged
	}
	return r
}

// StreamMismatch is, per direction, the STREAM data QUIC carried for the
// first time minus the bytes the HTTP/3 layer framed: zero when every
// HTTP/3 byte is in exactly one layer.
func (l *LayerCounts) StreamMismatch() (in, out int64) {
	f := func(d *dirCounts) int64 {
		return d.streamData.Load() - d.h3Frames.Load() - d.qpack.Load() - d.body.Load()
	}
	return f(&l.in), f(&l.out)
}

// newTrace is one connection's trace, counting into l; cc is its socket.
func (l *LayerCounts) newTrace(cc *countConn) *connTrace {
	t := &connTrace{l: l, sock: cc}
	if cc != nil {
		cc.trace.Store(t)
	}
	return t
}

// connTrace is one connection's trace; every producer (quic-go's
// connection, http3's connection and streams) records into it. When the
// last producer closes, its socket is marked closing.
type connTrace struct {
	l    *LayerCounts
	sock *countConn // nil in tests of the trace alone
	// h3: the connection is dialed and http3's producer may come. Until
	// then, without packet events, a producer (quic-go's connection,
	// added as it is dialed) gets no recorder.
	h3        atomic.Bool
	producers atomic.Int64
	seen      cover        // its STREAM data seen (cover.go)
	loggedIn  atomic.Int64 // the packets in its events: received and dropped
	ctrl      atomic.Int64 // our control stream's ID + 1 (0: not opened yet)
}

func (t *connTrace) AddProducer() qlogwriter.Recorder {
	if !t.l.packets && !t.h3.Load() {
		return nil // quic-go's connection: it then builds no events
	}
	t.producers.Add(1)
	return t
}

func (t *connTrace) Close() error {
	if t.producers.Add(-1) == 0 { // no event comes after this
		if t.sock != nil {
			t.sock.markClosing()
		}
	}
	return nil
}

// RecordEvent counts one event; quic-go and http3 call it synchronously
// as they build or parse what it describes.
func (t *connTrace) RecordEvent(ev qlogwriter.Event) {
	switch e := ev.(type) {
	case qlog.PacketSent:
		t.packet(&t.l.out, false, e.Raw.Length, e.Frames)
	case *qlog.PacketSent:
		t.packet(&t.l.out, false, e.Raw.Length, e.Frames)
	case qlog.PacketReceived:
		t.packet(&t.l.in, true, e.Raw.Length, e.Frames)
	case *qlog.PacketReceived:
		t.packet(&t.l.in, true, e.Raw.Length, e.Frames)
	case qlog.PacketDropped: // read from the socket, then discarded: QUIC's
		t.dropped(e.Raw.Length)
	case *qlog.PacketDropped:
		t.dropped(e.Raw.Length)
	case qlog.VersionNegotiationReceived, *qlog.VersionNegotiationReceived:
		// quic-go logs no length for these; a QUIC v1 server sends none.
	case h3qlog.FrameCreated:
		t.created(e)
	case *h3qlog.FrameCreated:
		t.created(*e)
	case h3qlog.FrameParsed:
		frame(&t.l.in, e.Raw, e.Frame.Frame)
	case *h3qlog.FrameParsed:
		frame(&t.l.in, e.Raw, e.Frame.Frame)
	case h3qlog.StreamTypeSet:
		t.streamType(e)
	case *h3qlog.StreamTypeSet:
		t.streamType(*e)
	}
}

// created counts a frame we send, but with packet events not one on our
// control stream: packet counts those bytes as they are carried. (Without,
// the control stream's SETTINGS count here; http3 logs their length with
// the stream type's byte before them.)
func (t *connTrace) created(e h3qlog.FrameCreated) {
	if t.l.packets && t.ctrl.Load() == int64(e.StreamID)+1 {
		return
	}
	frame(&t.l.out, e.Raw, e.Frame.Frame)
}

// packet counts a packet's length and the STREAM data it carries for the
// first time (in its direction, on its connection).
func (t *connTrace) dropped(length int) {
	t.l.in.packets.Add(int64(max(length, 0)))
	t.loggedIn.Add(int64(max(length, 0)))
}

func (t *connTrace) packet(d *dirCounts, in bool, length int, frames []qlog.Frame) {
	d.packets.Add(int64(max(length, 0)))
	if in {
		t.loggedIn.Add(int64(max(length, 0)))
	}
	for _, f := range frames {
		var sf *qlog.StreamFrame
		switch x := f.Frame.(type) {
		case qlog.StreamFrame:
			sf = &x
		case *qlog.StreamFrame:
			sf = x
		}
		if sf == nil {
			continue
		}
		n := t.seen.firstTime(coverKey{in, int64(sf.StreamID)}, sf.Offset, sf.Length, sf.Fin)
		d.streamData.Add(n)
		if !in && t.ctrl.Load() == int64(sf.StreamID)+1 {
			d.h3Frames.Add(n) // our control stream: HTTP/3 frames only
		}
	}
}

// frame counts one HTTP/3 frame: its header to the frame layer, a HEADERS
// payload to QPACK, a DATA payload to the body, any other frame whole to
// the frame layer.
func frame(d *dirCounts, raw h3qlog.RawInfo, f any) {
	if raw.Length < 0 {
		return // an invalid frame http3 refused: its connection or stream ends
	}
	payload := max(raw.PayloadLength, 0)
	switch f.(type) {
	case h3qlog.HeadersFrame, *h3qlog.HeadersFrame:
		d.qpack.Add(int64(payload))
	case h3qlog.DataFrame, *h3qlog.DataFrame:
		d.body.Add(int64(payload))
	default:
		payload = 0
	}
	d.h3Frames.Add(int64(raw.Length - payload))
}

// streamType counts the type varint that opens a stream the peer opened
// (control, QPACK encoder or decoder, push or unknown); http3 logs it as
// it reads it. Our control stream's is counted with its SETTINGS, as a
// packet carries them; this notes its ID (logged before anything is
// written on it).
func (t *connTrace) streamType(e h3qlog.StreamTypeSet) {
	if e.Initiator != h3qlog.InitiatorRemote {
		if e.StreamType == h3qlog.StreamTypeControl {
			t.ctrl.Store(int64(e.StreamID) + 1)
		}
		return
	}
	t.l.in.h3Frames.Add(int64(quicvarint.Len(e.StreamTypeBytes)))
}

// ErrLayers is a split whose layers do not add up.
var ErrLayers = errors.New("h3: bytes by layer do not add up")

// Check says whether every byte was counted exactly once: the layers of
// each direction add up to the socket's count (no Other), and the STREAM
// data QUIC carried for the first time is exactly what HTTP/3 framed.
//
// Without packet events (the default) there is nothing to compare them
// with: it only says whether the HTTP/3 layers exceed the socket's bytes
// (QUIC below zero).
func (l *LayerCounts) Check(socketIn, socketOut int64) error {
	in, out := l.Layers(socketIn, socketOut)
	if !l.packets {
		if in.QUIC < 0 || out.QUIC < 0 {
			return fmt.Errorf("%w: HTTP/3 bytes above the socket's: QUIC in %d out %d", ErrLayers, in.QUIC, out.QUIC)
		}
		return nil
	}
	sin, sout := l.StreamMismatch()
	if in.Other != 0 || out.Other != 0 || sin != 0 || sout != 0 {
		return fmt.Errorf("%w: unattributed in %d out %d (socket minus layers), stream data minus HTTP/3 bytes in %d out %d",
			ErrLayers, in.Other, out.Other, sin, sout)
	}
	return nil
}
