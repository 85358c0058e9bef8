package repl

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/wirebench/wirebench/kv"
)

// stream applies the leader's records from f.pos until the stream ends.
// Every error it returns starts with "repl: "; errResync (wrapped) asks
// for a full resync.
func (f *Follower) stream(ctx context.Context) error {
	f.mu.Lock()
	pos := f.pos
	f.mu.Unlock()
	q := url.Values{"id": {pos.ID}, "offset": {fmt.Sprint(pos.Offset)}, "name": {f.o.Name}}
	resp, kick, stop, err := f.get(ctx, pathStream+"?"+q.Encode())
	if err != nil {
		return err
	}
	defer stop()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusConflict:
		return fmt.Errorf("repl: %w: the leader has no offset %d of history %s", errResync, pos.Offset, pos.ID)
	default:
		return httpError(resp, "stream")
	}
	f.upAt = f.now()
	f.setLink(true)
	defer f.setLink(false)
	fr := newFrameReader(resp.Body, MaxFrame)
	var last kv.Ticket
	for {
		fm, err := fr.next()
		if err != nil {
			if ctx.Err() == nil && errors.Is(err, context.Canceled) {
				err = fmt.Errorf("no frame for %v", f.o.IdleTimeout)
			}
			return fmt.Errorf("repl: stream from offset %d: %w", pos.Offset, err)
		}
		kick()
		now := f.now()
		switch fm.Kind {
		case KindHeartbeat:
			lo, n := binary.Uvarint(fm.Payload)
			if n <= 0 {
				return fmt.Errorf("repl: stream from offset %d: %w: heartbeat payload", pos.Offset, ErrFrame)
			}
			f.mu.Lock()
			f.leaderOff, f.lastIO = int64(lo), now
			if f.leaderOff <= pos.Offset {
				f.delay = 0 // caught up
			}
			f.mu.Unlock()
			continue
		case KindRecord:
		default:
			return fmt.Errorf("repl: stream from offset %d: %w: kind %q in a stream", pos.Offset, ErrFrame, fm.Kind)
		}
		if fm.Seq != pos.Seq+1 {
			f.mu.Lock()
			f.seqErrors++
			f.mu.Unlock()
			// Never with one history; resync rather than guess.
			return fmt.Errorf("repl: %w: record %d after %d", errResync, fm.Seq, pos.Seq)
		}
		next := Position{ID: pos.ID, Offset: pos.Offset + fm.Size, Seq: fm.Seq}
		t, err := f.st.Apply(fm.Payload, next.encode())
		if err != nil {
			return fmt.Errorf("repl: applying record %d: %w", fm.Seq, err)
		}
		pos = next
		last = t
		f.mu.Lock()
		f.pos, f.lastTS, f.lastIO = pos, fm.TS, now
		f.delay = max(now.UnixMilli()-fm.TS, 0)
		f.leaderOff = max(f.leaderOff, pos.Offset)
		f.applied++
		f.mu.Unlock()
		if f.o.OnApply != nil {
			f.o.OnApply(pos, false)
		}
		if fr.buffered() == 0 && last != 0 {
			// Nothing more at hand: let the AOF catch up. A refused
			// write was undone in memory, position included, so the
			// data no longer matches pos: start over from a snapshot.
			if err := f.st.Wait(last); err != nil {
				return fmt.Errorf("repl: %w: the AOF refused a replicated record: %v", errResync, err)
			}
			last = 0
		}
	}
}
