package repl

import (
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/wirebench/wirebench/kv"
)

// BenchmarkSetTap is what every server pays for being a possible leader:
// parallel SETs on a memory-only store without a tap, with a leader that
// has no follower yet (the store only asks Active) and with one whose
// backlog is active.
//
//	go test ./kv/repl -run '^$' -bench SetTap -cpu 2
func BenchmarkSetTap(b *testing.B) {
	for _, mode := range []string{"no-tap", "leader-idle", "leader-backlog"} {
		b.Run(mode, func(b *testing.B) {
			o := kv.Options{}
			if mode != "no-tap" {
				l := NewLeader(0)
				if mode == "leader-backlog" {
					l.markSnapshot()
				}
				o.Tap = l
			}
			st, err := kv.Open(o)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			val := make([]byte, 128)
			var n atomic.Int64
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := n.Add(1)
					if _, _, err := st.Set("key:"+strconv.FormatInt(i%10000, 10), val, kv.SetOpts{}); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
