package resp

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/wirebench/wirebench/kv"
)

// TestGoRedisUnmodified: go-redis v9 connects with HELLO 3 (RESP3) and
// CLIENT SETINFO, pipelines, and reads our replies as redis-server's.
func TestGoRedisUnmodified(t *testing.T) {
	addr, _ := startOurs(t, kv.Options{Dir: t.TempDir(), Fsync: kv.FsyncAlways})
	for _, proto := range []int{2, 3} {
		rdb := redis.NewClient(&redis.Options{Addr: addr, Protocol: proto})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := rdb.Set(ctx, "g", "v", time.Minute).Err(); err != nil {
			t.Fatalf("RESP%d SET: %v", proto, err)
		}
		if v, err := rdb.Get(ctx, "g").Result(); err != nil || v != "v" {
			t.Fatalf("RESP%d GET: %q %v", proto, v, err)
		}
		if _, err := rdb.Get(ctx, "missing").Result(); !errors.Is(err, redis.Nil) {
			t.Fatalf("RESP%d GET missing: %v, want redis.Nil", proto, err)
		}
		if ttl, err := rdb.TTL(ctx, "g").Result(); err != nil || ttl <= 0 || ttl > time.Minute {
			t.Fatalf("RESP%d TTL: %v %v", proto, ttl, err)
		}
		if n, err := rdb.IncrBy(ctx, "ctr", 5).Result(); err != nil || n != 5*int64(proto-1) {
			t.Fatalf("RESP%d INCRBY: %d %v", proto, n, err)
		}
		cmds, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.MSet(ctx, "a", "1", "b", "2")
			p.MGet(ctx, "a", "b", "c")
			p.Del(ctx, "a")
			return nil
		})
		if err != nil || len(cmds) != 3 {
			t.Fatalf("RESP%d pipeline: %v", proto, err)
		}
		if vals := cmds[1].(*redis.SliceCmd).Val(); len(vals) != 3 || vals[0] != "1" || vals[2] != nil {
			t.Fatalf("RESP%d MGET: %#v", proto, vals)
		}
		if err := rdb.Do(ctx, "NOSUCH").Err(); err == nil || err.Error() != "ERR unknown command 'NOSUCH', with args beginning with: " {
			t.Fatalf("RESP%d unknown command: %v", proto, err)
		}
		cancel()
		rdb.Close()
	}
}
