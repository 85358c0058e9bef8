package scenario

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/load/resp"
	"github.com/wirebench/wirebench/measure"
)

// redisServer is a real redis-server (testkit.StartRedis) with the
// commands these tests send it over our own RESP connection.
type redisServer struct{ *testkit.Redis }

// command sends one command on a connection of its own and returns the
// reply's text (a bulk or simple string, or an integer).
func (r *redisServer) command(t *testing.T, args ...string) (string, error) {
	t.Helper()
	c := newRESPConn(r.Addr, new(measure.Bytes), 5*time.Second)
	defer c.close()
	bs := make([][]byte, len(args))
	for i, a := range args {
		bs[i] = []byte(a)
	}
	if err := c.send(context.Background(), resp.AppendCommand(nil, bs...)); err != nil {
		return "", err
	}
	rep, err := c.read()
	if err != nil {
		return "", err
	}
	if rep.Kind == '-' {
		return "", fmt.Errorf("redis: %s", rep.Bulk)
	}
	if rep.Kind == ':' {
		return strconv.FormatInt(rep.Int, 10), nil
	}
	return string(rep.Bulk), nil
}

func (r *redisServer) do(t *testing.T, args ...string) string {
	t.Helper()
	s, err := r.command(t, args...)
	if err != nil {
		t.Fatalf("redis %v: %v", args, err)
	}
	return s
}

// info reads the numeric fields of INFO's sections, plus each command's
// calls as "calls_<cmd>" and db0's keys as "keys".
func (r *redisServer) info(t *testing.T) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, line := range strings.Split(r.do(t, "INFO", "all"), "\r\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		if cmd, ok := strings.CutPrefix(k, "cmdstat_"); ok {
			calls, _, _ := strings.Cut(strings.TrimPrefix(v, "calls="), ",")
			n, _ := strconv.ParseInt(calls, 10, 64)
			out["calls_"+cmd] = n
			continue
		}
		if k == "db0" {
			keys, _, _ := strings.Cut(strings.TrimPrefix(v, "keys="), ",")
			out["keys"], _ = strconv.ParseInt(keys, 10, 64)
			continue
		}
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			out[k] = n
		}
	}
	return out
}
