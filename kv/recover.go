package kv

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// recoverAOF replays path into s and returns the size of its good prefix,
// the chain of the records in it (how the next record is numbered and
// sealed) and the file's format version (0: no file), having truncated a
// torn tail (or, with repair, everything from a corrupt record on).
func recoverAOF(s *Store, path string, repair bool) (int64, chain, int, error) {
	var none chain
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, none, 0, nil
	}
	if err != nil {
		return 0, none, 0, fmt.Errorf("kv: opening AOF: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, none, 0, fmt.Errorf("kv: AOF stat: %w", err)
	}
	size := fi.Size()
	head := make([]byte, min(size, int64(fileHeadLen)))
	if _, err := io.ReadFull(f, head); err != nil {
		return 0, none, 0, fmt.Errorf("kv: reading AOF header: %w", err)
	}
	magics := map[string]int{aofMagic: aofVersion, aofMagicV3: 3, aofMagicV2: 2, aofMagicV1: 1}
	if size < int64(len(aofMagic)) || (string(head[:len(aofMagic)]) == aofMagic && size < int64(fileHeadLen)) {
		// A crash while the header was written (one write, fsynced
		// before any record): nothing was ever acknowledged from this
		// file.
		prefix := allZero(head)
		for m := range magics {
			prefix = prefix || bytes.HasPrefix([]byte(m), head[:min(len(head), len(m))])
		}
		if !prefix {
			return 0, none, 0, fmt.Errorf("%w: %s: offset 0 holds %q", ErrBadMagic, path, head)
		}
		s.opts.Logf("kv: AOF %s: torn header (%d bytes), starting empty", path, size)
		return 0, none, 0, cutAt(path, 0)
	}
	version, ok := magics[string(head[:len(aofMagic)])]
	if !ok {
		return 0, none, 0, fmt.Errorf("%w: %s: offset 0 holds %q, want %q", ErrBadMagic, path, head[:len(aofMagic)], aofMagic)
	}
	base := int64(len(aofMagic))
	var c chain
	if version == 4 {
		base = int64(fileHeadLen)
		if c, ok = parseFileHead(head); !ok {
			ce := &CorruptError{Offset: 0, Reason: "file header checksum mismatch (a damaged file ID: no record can be checked without it)", Bytes: size, Exact: true}
			if !repair {
				return 0, none, 0, fmt.Errorf("kv: AOF %s: %w", path, ce)
			}
			s.opts.Logf("kv: AOF %s: corrupt file header: %s; --aof-repair: truncated at offset 0, dropping %d bytes (the whole file)", path, ce.Reason, size)
			return 0, none, 0, cutAt(path, 0)
		}
	}
	now := s.now()
	n := 0
	off, err := readRecords(f, version, base, size, &c, func(ops []Op) error {
		if err := s.replay(ops); err != nil {
			return err
		}
		n++
		return nil
	})
	var ce *CorruptError
	switch {
	case err == nil:
	case errors.Is(err, errTorn):
		s.opts.Logf("kv: AOF %s: %v at offset %d; truncating %d bytes (an incomplete final record: its write was cut, so it was never acknowledged)", path, err, off, size-off)
		if err := cutAt(path, off); err != nil {
			return 0, none, 0, err
		}
	case errors.As(err, &ce) && repair:
		intact := fmt.Sprint(ce.Intact)
		if !ce.Exact {
			intact = "at least " + intact
		}
		s.opts.Logf("kv: AOF %s: corrupt record at offset %d: %s; --aof-repair: truncated at offset %d, dropping %d bytes: the bad record and the %s intact records after it; kept %d records before it",
			path, ce.Offset, ce.Reason, off, size-off, intact, n)
		if err := cutAt(path, off); err != nil {
			return 0, none, 0, err
		}
	default:
		return 0, none, 0, fmt.Errorf("kv: AOF %s: %w", path, err)
	}
	if !s.opts.Replica {
		// Expiry is judged once the whole history is in: a key's
		// later EXPIRE or PERSIST may have moved the time its SET had.
		for i := range s.shards {
			for k, e := range s.shards[i].m {
				if e.expired(now) {
					delete(s.shards[i].m, k)
				}
			}
		}
	}
	s.opts.Logf("kv: AOF %s: replayed %d records (format version %d), %d keys", path, n, version, s.Len())
	return off, c, version, nil
}

// replay applies one record's ops to the maps; no locks (start-up only).
// Expired entries are kept, with their expiry, until recoverAOF has
// replayed every record: dropping a SET whose time had passed lost the key
// when a later PERSIST or EXPIRE had moved that time (issue 41's chaos
// test run: an APPEND to it then refused the start). It fails, changing
// nothing, on an APPEND that does not fit the value replayed so far.
func (s *Store) replay(ops []Op) error {
	for _, op := range ops {
		if op.Code != opAppend {
			continue
		}
		e, ok := s.shards[shardOf(string(op.Key))].m[string(op.Key)]
		if !ok || len(e.val)+len(op.Val) != op.Total {
			// Two APPENDs of one key in one record do not occur.
			return fmt.Errorf("APPEND of %d bytes to key %q holding %d bytes (present %v) does not make the logged %d", len(op.Val), op.Key, len(e.val), ok, op.Total)
		}
	}
	for _, op := range ops {
		switch op.Code {
		case opSet:
			sh := &s.shards[shardOf(string(op.Key))]
			sh.put(string(op.Key), entry{val: slices.Clone(op.Val), exp: op.Exp})
		case opDel:
			delete(s.shards[shardOf(string(op.Key))].m, string(op.Key))
		case opExpireAt:
			sh := &s.shards[shardOf(string(op.Key))]
			e, ok := sh.m[string(op.Key)]
			if !ok {
				continue
			}
			e.exp = op.Exp
			sh.put(string(op.Key), e)
		case opFlushAll:
			for i := range s.shards {
				s.shards[i].replace(nil)
			}
		case opAppend:
			sh := &s.shards[shardOf(string(op.Key))]
			e := sh.m[string(op.Key)]
			sh.put(string(op.Key), entry{val: append(e.val, op.Val...), exp: op.Exp})
		case opMeta:
			s.setMeta(op.Val)
		}
	}
	return nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func zeroFrom(f io.ReaderAt, off, size int64) (bool, error) {
	buf := make([]byte, 1<<16)
	for off < size {
		n, err := f.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		if !allZero(buf[:n]) {
			return false, nil
		}
		off += int64(n)
		if err != nil && !errors.Is(err, io.EOF) {
			return false, fmt.Errorf("kv: reading AOF tail: %w", err)
		}
		if n == 0 {
			break
		}
	}
	return true, nil
}

// cutAt truncates path to size and fsyncs it, so the cut survives a crash
// before the next write.
func cutAt(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("kv: opening AOF to truncate: %w", err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		return fmt.Errorf("kv: truncating AOF at %d: %w", size, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("kv: syncing truncated AOF: %w", err)
	}
	return nil
}
