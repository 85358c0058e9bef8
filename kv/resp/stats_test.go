package resp

import (
	"context"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/kv"
)

// commandsProcessed reads INFO stats' total_commands_processed.
func commandsProcessed(t *testing.T, info string) int64 {
	t.Helper()
	m := regexp.MustCompile(`total_commands_processed:(\d+)`).FindStringSubmatch(info)
	if m == nil {
		t.Fatalf("no total_commands_processed in %q", info)
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

// TestTotalCommandsProcessed counts exactly as redis-server: commands
// that ran (INFO itself once it has run), not unknown ones or ones of the
// wrong arity; pipelined commands one each. Exact with a raw client on
// both engines; with go-redis (which adds a command of its own to this
// sequence) ours must grow as much as a real redis-server, when present.
func TestTotalCommandsProcessed(t *testing.T) {
	raw := func(t *testing.T, addr string) int64 {
		c := dial(t, addr)
		n0 := commandsProcessed(t, c.do(t, "INFO", "stats"))
		c.do(t, "SET", "a", "1")
		c.do(t, "GET", "a")
		c.do(t, "NOSUCH", "x")
		c.do(t, "GET") // wrong arity
		for range 5 {
			c.send("PING")
		}
		for range 5 {
			if r, err := c.read(); err != nil || r != "+PONG" {
				t.Fatalf("pipelined PING: %q %v", r, err)
			}
		}
		c.do(t, "APPEND", "a", "2")
		return commandsProcessed(t, c.do(t, "INFO", "stats")) - n0
	}
	const want = 9 // the first INFO, SET, GET, 5 PINGs, APPEND
	for _, engine := range []string{EngineOwn, EngineRedcon} {
		st, err := kv.Open(kv.Options{})
		if err != nil {
			t.Fatal(err)
		}
		srv, err := Listen("127.0.0.1:0", st, Options{Engine: engine})
		if err != nil {
			t.Fatal(err)
		}
		got := raw(t, srv.Addr())
		srv.Close()
		st.Close()
		if got != want {
			t.Errorf("%s: total_commands_processed grew by %d, want %d", engine, got, want)
		}
	}
	goredis := func(t *testing.T, addr string) int64 {
		rdb := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true, PoolSize: 1})
		defer rdb.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		n0 := commandsProcessed(t, rdb.Info(ctx, "stats").Val())
		rdb.Set(ctx, "a", "1", 0)
		rdb.Do(ctx, "NOSUCH", "x")
		rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for range 5 {
				p.Ping(ctx)
			}
			return nil
		})
		return commandsProcessed(t, rdb.Info(ctx, "stats").Val()) - n0
	}
	ours, _ := startOurs(t, kv.Options{})
	got := goredis(t, ours)
	if got < 7 {
		t.Fatalf("go-redis: total_commands_processed grew by %d, want at least 7", got)
	}
	if wantRedis := goredis(t, testkit.StartRedis(t).Addr); got != wantRedis {
		t.Fatalf("go-redis: ours grew by %d, redis-server by %d", got, wantRedis)
	}
}

// TestConfigGetAppendfsync: a memory-only server answers appendonly no
// and appendfsync no (redis-server answers everysec, its unused default:
// see configParams); with an AOF, the policy in use.
func TestConfigGetAppendfsync(t *testing.T) {
	for _, tc := range []struct {
		o         kv.Options
		aof, sync string
	}{
		{kv.Options{}, "no", "no"},
		{kv.Options{Dir: t.TempDir(), Fsync: kv.FsyncAlways}, "yes", "always"},
		{kv.Options{Dir: t.TempDir()}, "yes", "everysec"},
	} {
		addr, _ := startOurs(t, tc.o)
		rdb := redis.NewClient(&redis.Options{Addr: addr})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		got, err := rdb.ConfigGet(ctx, "append*").Result()
		cancel()
		rdb.Close()
		if err != nil || got["appendonly"] != tc.aof || got["appendfsync"] != tc.sync {
			t.Errorf("dir %q: CONFIG GET append* = %v, %v; want appendonly %s, appendfsync %s", tc.o.Dir, got, err, tc.aof, tc.sync)
		}
	}
}
