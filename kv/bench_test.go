package kv

import (
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/wirebench/wirebench/load/keydist"
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
	_, ch := newFile()
	for b.Loop() {
		var start int
		buf, start = beginFrame(buf[:0])
		buf = endFrame(appendSetOp(buf, "key:1234", val, 0), start, &ch)
	}
}

// BenchmarkActiveExpiry is one tick of active expiry (every shard) over
// 10,000 keys, as study kv's key space: without any expiry, where the
// scan now passes over every shard, and with one far-off expiry per
// shard, where it visits every key as it did for every load before.
//
//	flock /tmp/wirebench-load.lock go test ./kv -run '^$' -bench ActiveExpiry
func BenchmarkActiveExpiry(b *testing.B) {
	for _, ttls := range []bool{false, true} {
		b.Run(map[bool]string{false: "no-ttl", true: "ttl-in-every-shard"}[ttls], func(b *testing.B) {
			s, err := Open(Options{Now: func() int64 { return 1 }})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			for i := range 10000 {
				s.Set("key:"+strconv.Itoa(i), make([]byte, 128), SetOpts{})
			}
			var covered [nShards]bool
			for i := 0; ttls && i < 100000; i++ {
				if k := "ttl:" + strconv.Itoa(i); !covered[shardOf(k)] {
					covered[shardOf(k)] = true
					s.Set(k, []byte("v"), SetOpts{Exp: 1 << 50})
				}
			}
			for b.Loop() {
				for i := range s.shards {
					s.expireShard(&s.shards[i], 1, 64)
				}
			}
		})
	}
}

// BenchmarkSetZipf is SETs of 128-byte values on Zipf 0.99 keys over
// 10,000 (study kv --key-dist zipf:0.99), from parallel goroutines, each
// waited for under AOF everysec: with -cpu 2 and -mutexprofile it shows
// where a hot key's writers meet (its shard's lock, or the AOF's).
//
//	flock /tmp/wirebench-load.lock go test ./kv -run '^$' -bench SetZipf -cpu 1,2 -mutexprofile /tmp/kv-mutex.out
func BenchmarkSetZipf(b *testing.B) {
	s, err := Open(Options{Dir: b.TempDir(), Fsync: FsyncEverySec, RewritePercent: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	d, err := keydist.New(keydist.Spec{Pattern: keydist.Zipf, Exp: 0.99}, 0, 9999)
	if err != nil {
		b.Fatal(err)
	}
	val := make([]byte, 128)
	var stream atomic.Uint64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		src := d.Source(1, stream.Add(1))
		for pb.Next() {
			_, tk, err := s.Set("key:"+strconv.FormatInt(src.Key(), 10), val, SetOpts{})
			if err == nil {
				err = s.Wait(tk)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}
