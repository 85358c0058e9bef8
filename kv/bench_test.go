package kv

import (
	"strconv"
	"sync/atomic"
	"testing"
)

// BenchmarkSetAOF is the append hot path: parallel SETs of 128-byte
// values to a store with an AOF, each waited for (written to the file;
// fsync left to the OS, so the disk does not set the pace), and frame
// building alone (header, checksums) for one such SET.
//
//	flock /tmp/wirebench-load.lock go test ./kv -run '^$' -bench 'SetAOF|Frame' -cpu 2
func BenchmarkSetAOF(b *testing.B) {
	s, err := Open(Options{Dir: b.TempDir(), Fsync: FsyncNo, RewritePercent: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	val := make([]byte, 128)
	var n atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			_, tk, err := s.Set("key:"+strconv.FormatInt(i%10000, 10), val, SetOpts{})
			if err == nil {
				err = s.Wait(tk)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkFrame(b *testing.B) {
	val := make([]byte, 128)
	var buf []byte
	b.SetBytes(int64(len(appendSetOp(nil, "key:1234", val, 0))))
	for b.Loop() {
		var start int
		buf, start = beginFrame(buf[:0])
		buf = endFrame(appendSetOp(buf, "key:1234", val, 0), start, 1)
	}
}
