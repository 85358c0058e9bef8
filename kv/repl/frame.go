// Package repl replicates a kv.Store from a leader to read-only
// followers over HTTP, as Redis's PSYNC does: the leader tags its history
// with a replication ID (new at every start, and whenever its store undid
// changes it had already streamed) and numbers every record; a follower
// asks for the stream from its (ID, offset), and when the leader no longer
// has that offset in its backlog (the follower fell too far behind) or
// has another ID (it restarted), the follower loads a snapshot taken at an
// exact position and streams on from there. The follower stores each
// record together with its new position in one AOF record (kv.Store.Apply),
// so after any crash it resumes where its data is.
package repl

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/wirebench/wirebench/kv"
)

// The stream and snapshot bodies are sequences of CRC-framed frames:
//
//	frame:  0        4          8      9          17         25
//	        +--------+----------+------+----------+----------+-----------+
//	        |  len   |  crc32c  | kind |   seq    |    ts    |  payload  |
//	        +--------+----------+------+----------+----------+-----------+
//	        len:    uint32 LE, bytes after the 8-byte head (17..MaxFrame)
//	        crc32c: Castagnoli CRC of the 4 len bytes then the body
//	        seq:    uint64 LE, the record's number in this history (1, 2, ...)
//	        ts:     int64 LE, the leader's Unix ms when it was recorded/sent
//
//	kinds:  'R' record     payload: kv ops (as kv.Tap received them)
//	        'H' heartbeat  payload: uvarint, the leader's offset now
//	        'S' snapshot   payload: kv SET ops; seq: the frame's number
//	                       in the snapshot (1, 2, ...)
//	        'E' end of a snapshot: payload: the position and what the
//	            'S' frames held, "ID OFFSET SEQ FRAMES OPS CRC" (CRC: hex
//	            crc32c of the 'S' payloads in order), so that a snapshot
//	            cut, reordered or missing a frame is never taken as whole
//
// A record's offset is the byte offset of its frame in the history's
// stream (the first record is at 0); a follower that applied it is at
// offset+8+len. Heartbeats are not part of the history.
const (
	frameHead = 8
	bodyHead  = 17
	// MaxFrame bounds one frame: a record of the largest MSET kv accepts
	// (576 MiB). A frame's buffer grows as its bytes arrive (growStep),
	// so a header alone never allocates that much.
	MaxFrame = kv.MaxValueLen + 64<<20
)

// Frame kinds.
const (
	KindRecord    = 'R'
	KindHeartbeat = 'H'
	KindSnapshot  = 'S'
	KindEnd       = 'E'
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrFrame is a malformed frame.
var ErrFrame = errors.New("bad replication frame")

// Frame is one decoded frame; Payload aliases the reader's buffer.
type Frame struct {
	Kind    byte
	Seq     uint64
	TS      int64
	Payload []byte
	Size    int64 // bytes on the wire, head included
}

// appendFrame appends a frame to b.
func appendFrame(b []byte, kind byte, seq uint64, ts int64, payload []byte) []byte {
	start := len(b)
	b = append(b, 0, 0, 0, 0, 0, 0, 0, 0, kind)
	b = binary.LittleEndian.AppendUint64(b, seq)
	b = binary.LittleEndian.AppendUint64(b, uint64(ts))
	b = append(b, payload...)
	binary.LittleEndian.PutUint32(b[start:], uint32(len(b)-start-frameHead))
	crc := crc32.Update(0, castagnoli, b[start:start+4])
	crc = crc32.Update(crc, castagnoli, b[start+frameHead:])
	binary.LittleEndian.PutUint32(b[start+4:], crc)
	return b
}

// frameReader reads frames, reusing one buffer.
type frameReader struct {
	r   *bufio.Reader
	buf []byte
	max int
}

func newFrameReader(r io.Reader, max int) *frameReader {
	return &frameReader{r: bufio.NewReaderSize(r, 1<<16), max: max}
}

// next reads one frame; io.EOF only at a frame boundary, a cut frame is
// io.ErrUnexpectedEOF.
func (fr *frameReader) next() (Frame, error) {
	var head [frameHead]byte
	if _, err := io.ReadFull(fr.r, head[:]); err != nil {
		return Frame{}, err
	}
	n := int(binary.LittleEndian.Uint32(head[:4]))
	if n < bodyHead || n > fr.max {
		return Frame{}, fmt.Errorf("%w: length %d out of range %d..%d", ErrFrame, n, bodyHead, fr.max)
	}
	body, err := fr.readBody(n)
	if err != nil {
		return Frame{}, err
	}
	crc := crc32.Update(0, castagnoli, head[:4])
	crc = crc32.Update(crc, castagnoli, body)
	if crc != binary.LittleEndian.Uint32(head[4:]) {
		return Frame{}, fmt.Errorf("%w: checksum mismatch", ErrFrame)
	}
	f := Frame{Kind: body[0], Seq: binary.LittleEndian.Uint64(body[1:]), TS: int64(binary.LittleEndian.Uint64(body[9:])),
		Payload: body[bodyHead:], Size: int64(frameHead + n)}
	switch f.Kind {
	case KindRecord, KindHeartbeat, KindSnapshot, KindEnd:
	default:
		return Frame{}, fmt.Errorf("%w: unknown kind 0x%02x", ErrFrame, f.Kind)
	}
	return f, nil
}

// growStep is the most the reader allocates ahead of the bytes that
// arrived: a frame's buffer grows as its body comes in, so a length
// header alone (up to the limit, 576 MiB) costs at most this much.
const growStep = 1 << 20

// readBody reads n bytes into the reused buffer, growing it by at most
// growStep (or doubling) ahead of what has been read.
func (fr *frameReader) readBody(n int) ([]byte, error) {
	buf := fr.buf[:0]
	for len(buf) < n {
		if len(buf) == cap(buf) { // at most doubling what arrived
			buf = slices.Grow(buf, min(n-len(buf), max(len(buf), growStep)))
		}
		m, err := io.ReadFull(fr.r, buf[len(buf):min(n, cap(buf))])
		buf = buf[:len(buf)+m]
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			fr.keep(buf)
			return nil, err
		}
	}
	fr.keep(buf)
	return buf, nil
}

// keep holds on to buf for the next frame unless it is large.
func (fr *frameReader) keep(buf []byte) {
	if cap(buf) <= growStep {
		fr.buf = buf[:0]
	} else {
		fr.buf = nil
	}
}

// buffered reports whether a whole frame head may already be read
// without blocking (the follower waits for its AOF only when it is not).
func (fr *frameReader) buffered() int { return fr.r.Buffered() }

// Position is where a follower is in a leader's history.
type Position struct {
	ID     string // "" when none (a resync is needed)
	Offset int64
	Seq    uint64
}

func (p Position) encode() []byte {
	if p.ID == "" {
		return nil
	}
	return fmt.Appendf(nil, "%s %d %d", p.ID, p.Offset, p.Seq)
}

// parsePosition reads what encode wrote; empty input is no position.
func parsePosition(b []byte) (Position, error) {
	if len(b) == 0 {
		return Position{}, nil
	}
	f := strings.Fields(string(b))
	if len(f) != 3 || !validID(f[0]) {
		return Position{}, fmt.Errorf("repl: bad position %q", b)
	}
	off, err1 := strconv.ParseInt(f[1], 10, 64)
	seq, err2 := strconv.ParseUint(f[2], 10, 64)
	if err1 != nil || err2 != nil || off < 0 {
		return Position{}, fmt.Errorf("repl: bad position %q", b)
	}
	return Position{ID: f[0], Offset: off, Seq: seq}, nil
}

// IDLen is the length of a replication ID (hex, as Redis's 40).
const IDLen = 40

func validID(s string) bool {
	if len(s) != IDLen {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// snapshotEnd is the payload of a snapshot's 'E' frame.
type snapshotEnd struct {
	Pos    Position
	Frames int64  // 'S' frames before it
	Ops    int64  // SET ops in them
	CRC    uint32 // crc32c of their payloads in order
	ts     int64  // the end frame's time (not encoded in the payload)
}

func (e snapshotEnd) encode() []byte {
	return fmt.Appendf(nil, "%s %d %d %d %d %08x", e.Pos.ID, e.Pos.Offset, e.Pos.Seq, e.Frames, e.Ops, e.CRC)
}

// parseSnapshotEnd reads what encode wrote.
func parseSnapshotEnd(b []byte) (snapshotEnd, error) {
	f := strings.Fields(string(b))
	if len(f) != 6 {
		return snapshotEnd{}, fmt.Errorf("%w: snapshot end %.64q: want 6 fields (a leader too old to verify its snapshots?)", ErrFrame, b)
	}
	pos, err := parsePosition([]byte(strings.Join(f[:3], " ")))
	if err != nil || pos.ID == "" {
		return snapshotEnd{}, fmt.Errorf("%w: snapshot end %.64q: bad position", ErrFrame, b)
	}
	frames, err1 := strconv.ParseInt(f[3], 10, 64)
	ops, err2 := strconv.ParseInt(f[4], 10, 64)
	crc, err3 := strconv.ParseUint(f[5], 16, 32)
	if err1 != nil || err2 != nil || err3 != nil || frames < 0 || ops < 0 || len(f[5]) != 8 {
		return snapshotEnd{}, fmt.Errorf("%w: snapshot end %.64q: bad counts", ErrFrame, b)
	}
	return snapshotEnd{Pos: pos, Frames: frames, Ops: ops, CRC: uint32(crc)}, nil
}
