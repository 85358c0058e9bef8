package scenario

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/results"
)

// KV operations: the commands a KV VU draws from (Ratio).
const (
	kvOpSet = iota
	kvOpGet
	kvOpDel
	kvOpExpire
	kvNumOps
)

var kvOpNames = [kvNumOps]string{"SET", "GET", "DEL", "EXPIRE"}

// Ratio is a mix of KV commands by weight: SET:GET as memtier_benchmark's
// --ratio, and optionally :DEL:EXPIRE (PEXPIRE over RESP).
type Ratio struct {
	Set    int `json:"set"`
	Get    int `json:"get"`
	Del    int `json:"del,omitempty"`
	Expire int `json:"expire,omitempty"`
}

// ParseRatio reads SET:GET[:DEL[:EXPIRE]], e.g. 1:10 or 1:8:1:0.
func ParseRatio(s string) (Ratio, error) {
	f := strings.Split(s, ":")
	var w [kvNumOps]int
	bad := len(f) < 2 || len(f) > kvNumOps
	total := 0
	for i := 0; i < len(f) && !bad; i++ {
		n, err := strconv.Atoi(f[i])
		bad = err != nil || n < 0 || n > 1<<20
		w[i] = n
		total += n
	}
	if bad || total == 0 {
		return Ratio{}, fmt.Errorf("%w: --ratio %q: want SET:GET[:DEL[:EXPIRE]] weights, e.g. 1:10 (memtier's), not all 0", load.ErrOptions, s)
	}
	return Ratio{w[0], w[1], w[2], w[3]}, nil
}

// String is the ratio as ParseRatio reads it, trailing zero weights of
// DEL and EXPIRE left out.
func (r Ratio) String() string {
	s := strconv.Itoa(r.Set) + ":" + strconv.Itoa(r.Get)
	if r.Del > 0 || r.Expire > 0 {
		s += ":" + strconv.Itoa(r.Del)
	}
	if r.Expire > 0 {
		s += ":" + strconv.Itoa(r.Expire)
	}
	return s
}

func (r Ratio) or(def Ratio) Ratio {
	if r == (Ratio{}) {
		return def
	}
	return r
}

func (r Ratio) weights() [kvNumOps]int { return [kvNumOps]int{r.Set, r.Get, r.Del, r.Expire} }

// kvMix draws commands by weight and names the result's operations:
// one per command sent, split into "hot" and "cold" by key class when
// the key distribution has hot keys, so the latency of the few keys that
// take most of the traffic shows beside the rest's.
type kvMix struct {
	kinds []int // the commands with a weight, in kvOp order
	cum   []int // their cumulative weights
	names []string
	index [kvNumOps][2]int // Outcome.Op by command and class (1: hot)
}

func newKVMix(r Ratio, classes bool) kvMix {
	var m kvMix
	total := 0
	for op, w := range r.weights() {
		if w == 0 {
			continue
		}
		total += w
		m.kinds, m.cum = append(m.kinds, op), append(m.cum, total)
		if !classes {
			m.index[op] = [2]int{len(m.names), len(m.names)}
			m.names = append(m.names, kvOpNames[op])
			continue
		}
		m.index[op] = [2]int{len(m.names), len(m.names) + 1}
		m.names = append(m.names, kvOpNames[op]+" cold", kvOpNames[op]+" hot")
	}
	return m
}

// pick draws a command; with one command it draws nothing, so a kv-get
// VU's keys are the first draws of its source.
func (m *kvMix) pick(r *rand.Rand) int {
	if len(m.kinds) == 1 {
		return m.kinds[0]
	}
	u := r.IntN(m.cum[len(m.cum)-1])
	for i, c := range m.cum {
		if u < c {
			return m.kinds[i]
		}
	}
	panic("unreachable")
}

func (m *kvMix) out(op int, hot bool) int {
	if hot {
		return m.index[op][1]
	}
	return m.index[op][0]
}

// kvCounts is one VU's count of what it drew and what its GETs found;
// Finish sums them after every VU closed.
type kvCounts struct {
	requests, hot      int64 // commands drawn, and of them on hot keys
	absent             int64 // GETs of keys never written (MissRatio)
	gets, hits, misses int64 // GET replies: a value, or none
}

// Finish implements Scenario: a KV VU counts all its bytes itself; the
// KV section has the traffic on hot keys and the GETs' hit ratio.
func (s *kvScenario) Finish(res *results.Load) {
	k := &results.KV{KeyDist: s.o.KeyDist.String(), Keys: int64(s.o.Keys), Seed: s.o.Seed,
		HotKeys: s.dist.HotKeys(), ExpectedHotShare: s.dist.HotShare()}
	for _, c := range s.counts {
		k.Requests += c.requests
		k.HotRequests += c.hot
		k.AbsentRequests += c.absent
		k.Gets += c.gets
		k.Hits += c.hits
		k.Misses += c.misses
	}
	res.KV = k
}

// ParseExpiryRange reads memtier_benchmark's --expiry-range, MIN-MAX,
// each whole seconds or a Go duration (10-60, 500ms-2s).
func ParseExpiryRange(s string) (lo, hi time.Duration, err error) {
	a, b, ok := strings.Cut(s, "-")
	one := func(x string) (time.Duration, error) {
		if n, err := strconv.Atoi(x); err == nil {
			return time.Duration(n) * time.Second, nil
		}
		return time.ParseDuration(x)
	}
	lo, err1 := one(a)
	hi, err2 := one(b)
	if !ok || err1 != nil || err2 != nil || lo < time.Millisecond || hi < lo {
		return 0, 0, fmt.Errorf("%w: --expiry-range %q: want MIN-MAX, seconds or durations (10-60, 500ms-2s), 1ms ≤ MIN ≤ MAX", load.ErrOptions, s)
	}
	return lo, hi, nil
}
