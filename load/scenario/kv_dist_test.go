package scenario

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/keydist"
	"github.com/wirebench/wirebench/results"
)

// opRequests sums a result's requests per command over key classes
// ("GET hot" and "GET cold" are GET).
func opRequests(res *results.Load) map[string]int64 {
	m := map[string]int64{}
	for _, o := range res.Ops {
		name, _, _ := strings.Cut(o.Name, " ")
		m[name] += o.Requests
	}
	return m
}

// TestKVMixRedis: a cache-like mix (SET:GET:DEL:EXPIRE 2:6:1:1, Zipf
// 0.99 keys, TTLs on every SET, 10% of GETs for absent keys, value sizes
// from a weighted list, pipelined) against a real redis-server: Redis
// counts each command as we sent it, its keyspace hits and misses are our
// GETs' hits and misses, nothing fails (misses are expected here), and
// the result splits each command into hot and cold keys.
func TestKVMixRedis(t *testing.T) {
	r := &redisServer{testkit.StartRedis(t)}
	const n, keys = 4000, 500
	sizes, err := keydist.ParseList("16:6,200:3,3000:1")
	if err != nil {
		t.Fatal(err)
	}
	ko := KVOptions{Name: ScenarioKVMixed, URL: r.URL(), Keys: keys, Pipeline: 8, Ratio: Ratio{2, 6, 1, 1},
		KeyDist: keydist.Spec{Pattern: keydist.Zipf, Exp: 0.99}, Sizes: sizes,
		ExpiryMin: 200 * time.Millisecond, ExpiryMax: 2 * time.Second, MissRatio: 0.1, Seed: 42}
	r.do(t, "CONFIG", "RESETSTAT")
	res := runKV(t, load.Options{Options: results.Options{Concurrency: 3, Requests: n}}, ko)
	in := r.info(t)
	if res.Requests != n || res.Failed != 0 {
		t.Fatalf("requests %d, failed %d %v", res.Requests, res.Failed, res.Failures)
	}
	want := []string{"SET cold", "SET hot", "GET cold", "GET hot", "DEL cold", "DEL hot", "EXPIRE cold", "EXPIRE hot"}
	for i, o := range res.Ops {
		if i >= len(want) || o.Name != want[i] || o.Requests == 0 {
			t.Fatalf("ops %v, want %v each with requests", res.Ops, want)
		}
	}
	ops := opRequests(res)
	if in["calls_set"] != ops["SET"]+keys || in["calls_get"] != ops["GET"] || in["calls_del"] != ops["DEL"] || in["calls_pexpire"] != ops["EXPIRE"] {
		t.Errorf("we sent %v (+%d preloaded SETs); redis counted SET %d GET %d DEL %d PEXPIRE %d",
			ops, keys, in["calls_set"], in["calls_get"], in["calls_del"], in["calls_pexpire"])
	}
	for op, w := range map[string]int64{"SET": 2, "GET": 6, "DEL": 1, "EXPIRE": 1} {
		if share := float64(ops[op]) / n; math.Abs(share-float64(w)/10) > 0.04 {
			t.Errorf("%s took %.3f of the commands, want %.1f", op, share, float64(w)/10)
		}
	}
	kv := res.KV
	t.Logf("kv section %+v", kv)
	if kv == nil || kv.Gets != ops["GET"] || kv.Hits+kv.Misses != kv.Gets || kv.Requests != n {
		t.Fatalf("kv section %+v, GETs sent %d", kv, ops["GET"])
	}
	if kv.Hits != in["keyspace_hits"] || kv.Misses != in["keyspace_misses"] {
		t.Errorf("we counted %d hits, %d misses; redis %d, %d", kv.Hits, kv.Misses, in["keyspace_hits"], in["keyspace_misses"])
	}
	if hr, _ := kv.HitRatio(); hr > 0.9 || hr < 0.3 {
		t.Errorf("hit ratio %.3f: want under 0.9 (10%% asked absent, keys deleted and expiring)", hr)
	}
	if kv.KeyDist != "zipf:0.99" || kv.HotKeys != 5 || kv.Seed != 42 || math.Abs(kv.HotShare()-kv.ExpectedHotShare) > 0.03 {
		t.Errorf("kv section %+v: hot share %.3f", kv, kv.HotShare())
	}
}

// TestKVSizesAndTTLRedis: each key is written at its own size from the
// list (the same at every write, so Redis's STRLEN is what Sizes.Of says)
// and with a TTL in the range asked.
func TestKVSizesAndTTLRedis(t *testing.T) {
	r := &redisServer{testkit.StartRedis(t)}
	const keys = 40
	sizes, err := keydist.ParseRange("1-300")
	if err != nil {
		t.Fatal(err)
	}
	res := runKV(t, load.Options{Options: results.Options{Concurrency: 2, Requests: 400}},
		KVOptions{Name: ScenarioKVSet, URL: r.URL(), KeyMin: 100, KeyMax: 100 + keys - 1, KeyDist: keydist.Spec{Pattern: keydist.Sequential},
			Sizes: sizes, ExpiryMin: time.Minute, ExpiryMax: 2 * time.Minute, Seed: 7})
	if res.Failed != 0 {
		t.Fatalf("failed %d %v", res.Failed, res.Failures)
	}
	distinct := map[int]bool{}
	for k := int64(100); k < 100+keys; k++ {
		key := string(appendKVKey(nil, k))
		n, _ := strconv.Atoi(r.do(t, "STRLEN", key))
		if want := sizes.Of(7, k); n != want {
			t.Errorf("%s: %d bytes, want %d", key, n, want)
		}
		distinct[n] = true
		ttl, _ := strconv.Atoi(r.do(t, "PTTL", key))
		if ttl < 50_000 || ttl > 120_000 {
			t.Errorf("%s: PTTL %d ms, want 1-2 minutes", key, ttl)
		}
	}
	if len(distinct) < keys/2 {
		t.Errorf("only %d distinct sizes over %d keys", len(distinct), keys)
	}
	if got := r.do(t, "DBSIZE"); got != strconv.Itoa(keys) {
		t.Errorf("redis holds %s keys, want %d (keys 100..%d)", got, keys, 100+keys-1)
	}
}

func TestParseRatio(t *testing.T) {
	for in, want := range map[string]Ratio{"1:10": {1, 10, 0, 0}, "0:1": {0, 1, 0, 0}, "2:6:1:1": {2, 6, 1, 1}, "1:0:1": {1, 0, 1, 0}} {
		got, err := ParseRatio(in)
		if err != nil || got != want || got.String() != in {
			t.Errorf("%q: %+v %v (%s)", in, got, err, got.String())
		}
	}
	for _, bad := range []string{"", "1", "0:0", "1:2:3:4:5", "a:1", "-1:2"} {
		if _, err := ParseRatio(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestKVMissRatioRedis: with every key preloaded, the GETs that miss are
// the share asked for, as Redis counts them, and fail nothing.
func TestKVMissRatioRedis(t *testing.T) {
	r := &redisServer{testkit.StartRedis(t)}
	const n = 3000
	r.do(t, "CONFIG", "RESETSTAT")
	res := runKV(t, load.Options{Options: results.Options{Concurrency: 2, Requests: n}},
		KVOptions{Name: ScenarioKVGet, URL: r.URL(), Keys: 200, Pipeline: 4, MissRatio: 0.25})
	in := r.info(t)
	if res.Failed != 0 || res.KV == nil {
		t.Fatalf("failed %d %v; kv %+v", res.Failed, res.Failures, res.KV)
	}
	hr, _ := res.KV.HitRatio()
	if res.KV.Misses != in["keyspace_misses"] || res.KV.Hits != in["keyspace_hits"] || math.Abs(hr-0.75) > 0.03 {
		t.Errorf("hits %d misses %d (ratio %.3f, want 0.75); redis %d, %d", res.KV.Hits, res.KV.Misses, hr, in["keyspace_hits"], in["keyspace_misses"])
	}
}

// TestKVAbsentGetsAreNoHotKeys: a GET of an absent key (--miss-ratio)
// asks the server for nokey:…, not for a hot key, so it is neither
// counted on the hot keys nor timed as one, and the hot share is of the
// commands on the key space: what the server's per-key counts show.
func TestKVAbsentGetsAreNoHotKeys(t *testing.T) {
	s, err := NewKV(KVOptions{Name: ScenarioKVGet, URL: "redis://127.0.0.1:6379", Keys: 1000,
		KeyDist: keydist.Spec{Pattern: keydist.Zipf, Exp: 0.99}, MissRatio: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.newKVVU(0)
	if err != nil {
		t.Fatal(err)
	}
	var onHot, absent int64
	for range 20000 {
		d := v.next()
		hot := s.dist.Hot(d.key) && !d.miss
		if d.out != s.mix.out(d.op, hot) {
			t.Fatalf("GET of %d (absent %v) timed as %s", d.key, d.miss, s.mix.names[d.out])
		}
		if hot {
			onHot++
		}
		if d.miss {
			absent++
		}
	}
	s.counts = []*kvCounts{v.counts}
	var res results.Load
	s.Finish(&res)
	k := res.KV
	if k.HotRequests != onHot || k.AbsentRequests != absent || k.Requests != 20000 {
		t.Fatalf("kv %+v, want %d on hot keys, %d absent", k, onHot, absent)
	}
	if got := k.HotShare(); math.Abs(got-k.ExpectedHotShare) > 0.02 {
		t.Errorf("hot share %.4f of the commands on the key space, expected %.4f", got, k.ExpectedHotShare)
	}
}
