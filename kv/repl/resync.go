package repl

import (
	"context"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"

	"github.com/wirebench/wirebench/kv"
)

// resync loads the leader's snapshot aside (kv.Replacement: in memory,
// and beside the AOF when the store has one) while the store keeps
// serving what it has, verifies it against the snapshot's end frame
// (frame count, op count, CRC of every payload) and only then swaps it in
// whole, with its position. A snapshot cut, refused or inconsistent at
// any point changes nothing: neither the data served, nor the position,
// nor the AOF (Redis's replicas likewise keep serving the old dataset
// until the new one is loaded).
func (f *Follower) resync(ctx context.Context) error {
	resp, kick, stop, err := f.get(ctx, pathSnapshot)
	if err != nil {
		return err
	}
	defer stop()
	if resp.StatusCode != http.StatusOK {
		return httpError(resp, "snapshot")
	}
	f.mu.Lock()
	f.syncing = true
	f.resyncs++
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.syncing = false
		f.mu.Unlock()
	}()
	f.o.Logf("repl: full resync from %s (replid %s, offset %s), loading aside; serving the %d keys we have until it is complete",
		f.o.Leader, resp.Header.Get("X-Repl-Id"), resp.Header.Get("X-Repl-Offset"), f.st.Len())
	rep, err := f.st.NewReplacement()
	if err != nil {
		return fmt.Errorf("repl: resync: %w", err)
	}
	defer rep.Abort() // does nothing after a swap
	end, err := loadSnapshot(resp.Body, rep, kick)
	if err != nil {
		return err
	}
	pos := end.Pos
	if err := f.st.Swap(rep, pos.encode()); err != nil {
		return fmt.Errorf("repl: swapping in the snapshot: %w", err)
	}
	f.mu.Lock()
	f.pos, f.lastIO, f.lastTS = pos, f.now(), end.ts
	f.leaderOff = max(f.leaderOff, pos.Offset)
	f.mu.Unlock()
	if f.o.OnApply != nil {
		f.o.OnApply(pos, true)
	}
	f.o.Logf("repl: resync done: %d keys at offset %d (record %d)", end.Ops, pos.Offset, pos.Seq)
	return nil
}

// loadSnapshot reads a snapshot body into rep and returns its verified
// end: every 'S' frame numbered in order, and the end frame's counts
// and CRC equal to what arrived. kick is called at each frame (the
// idle watchdog). Any error means rep must be dropped.
func loadSnapshot(r io.Reader, rep *kv.Replacement, kick func()) (snapshotEnd, error) {
	fr := newFrameReader(r, MaxFrame)
	var crc uint32
	for n := int64(1); ; n++ {
		fm, err := fr.next()
		if err != nil {
			return snapshotEnd{}, fmt.Errorf("repl: snapshot cut at frame %d after %d keys (dropped; the data served is unchanged): %w", n, rep.Ops(), err)
		}
		kick()
		switch fm.Kind {
		case KindSnapshot:
			if fm.Seq != uint64(n) {
				return snapshotEnd{}, fmt.Errorf("repl: snapshot: %w: frame %d numbered %d", ErrFrame, n, fm.Seq)
			}
			crc = crc32.Update(crc, castagnoli, fm.Payload)
			if err := rep.Load(fm.Payload); err != nil {
				return snapshotEnd{}, fmt.Errorf("repl: snapshot frame %d: %w", n, err)
			}
		case KindEnd:
			end, err := parseSnapshotEnd(fm.Payload)
			if err != nil {
				return snapshotEnd{}, fmt.Errorf("repl: snapshot: %w", err)
			}
			if end.Frames != n-1 || end.Ops != rep.Ops() || end.CRC != crc {
				return snapshotEnd{}, fmt.Errorf("repl: snapshot: %w: end frame says %d frames, %d keys, crc %08x; received %d, %d, %08x",
					ErrFrame, end.Frames, end.Ops, end.CRC, n-1, rep.Ops(), crc)
			}
			end.ts = fm.TS
			return end, nil
		default:
			return snapshotEnd{}, fmt.Errorf("repl: snapshot: %w: kind %q", ErrFrame, fm.Kind)
		}
	}
}
