package study

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/wirebench/wirebench/results"
	"github.com/wirebench/wirebench/results/stats"
	"golang.org/x/sys/unix"
)

// Seed 002's figures, quoted (../shared/seeds/002_*): 100,000 requests,
// 50 connections, 128-byte values, 10,000 keys; Redis measured by
// redis-benchmark over RESP, Toska (an HTTP/JSON store with an
// append-only file) by an Erlang :httpc client.
var (
	kvSeedRedis = map[string]float64{"SET": 259067.36, "GET": 242130.77}
	kvSeedToska = map[string]float64{"SET": 20375.35, "GET": 28522.00}
	// Toska's latency in ms: avg, p50, p90, p99, errors.
	kvSeedToskaLatency = map[string][5]float64{"SET": {2.44, 2.33, 2.96, 4.41, 0}, "GET": {1.75, 1.66, 2.09, 2.84, 0}}
)

// kvCellStats are a cell's medians over its successful trials.
type kvCellStats struct {
	id, op, persistence, label string
	trials                     int
	rps, benchRPS              float64 // ours, redis-benchmark's (0: none)
	// The clients' own CPU: per request (ns) and as a share of the run's
	// wall time (1: one CPU busy throughout); 0 when not measured.
	cpuPerReq, cpuShare, benchCPUPerReq, benchCPUShare float64
	avg, p50, p90, p99                                 time.Duration
	failed, requests                                   int64
}

func kvStats(res *results.Study) []kvCellStats {
	var out []kvCellStats
	for _, c := range res.Cells {
		op, persistence, _ := strings.Cut(c.Group, ", ")
		s := kvCellStats{id: c.ID, op: op, persistence: persistence, label: c.Label}
		var rps, bench, avg, p50, p90, p99, cpu, share, bcpu, bshare []float64
		for _, t := range res.TrialsOf(c.ID) {
			r := t.Load
			s.trials++
			s.failed += r.Failed
			s.requests += r.Requests
			rps = append(rps, r.RPS())
			avg = append(avg, float64(r.Latency.Mean()))
			p50 = append(p50, float64(r.Latency.Quantile(0.50)))
			p90 = append(p90, float64(r.Latency.Quantile(0.90)))
			p99 = append(p99, float64(r.Latency.Quantile(0.99)))
			if v, ok := t.External["redis-benchmark "+op+" rps"]; ok {
				bench = append(bench, v)
			}
			if c := r.CPU.User + r.CPU.System; c > 0 && r.Requests > 0 && r.Elapsed() > 0 {
				cpu = append(cpu, float64(c)/float64(r.Requests))
				share = append(share, float64(c)/float64(r.Elapsed()))
			}
			if v, ok := t.External[kvBenchCPUPerReq(op)]; ok {
				bcpu = append(bcpu, v)
			}
			if v, ok := t.External[kvBenchCPUShare(op)]; ok {
				bshare = append(bshare, v)
			}
		}
		s.rps, s.benchRPS = kvMedian(rps), kvMedian(bench)
		s.cpuPerReq, s.cpuShare, s.benchCPUPerReq, s.benchCPUShare = kvMedian(cpu), kvMedian(share), kvMedian(bcpu), kvMedian(bshare)
		s.avg, s.p50 = time.Duration(kvMedian(avg)), time.Duration(kvMedian(p50))
		s.p90, s.p99 = time.Duration(kvMedian(p90)), time.Duration(kvMedian(p99))
		out = append(out, s)
	}
	return out
}

func kvMedian(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return stats.Summarize(xs).Center
}

// kvNotes writes the seed's two tables beside this run's, and says which
// comparisons are like for like.
func kvNotes(res *results.Study) []string {
	st := kvStats(res)
	var b strings.Builder
	b.WriteString("## The seed beside this run\n\n")
	b.WriteString("Seed 002 (quoted): 100,000 requests, 50 connections, 128-byte values, 10,000 keys; Redis measured by redis-benchmark " +
		"(a C client, RESP), Toska (HTTP/JSON with an append-only file) by an Erlang :httpc client. Ours: the same settings, " +
		"every cell driven by wirebench's one client (medians over the trials; redis-benchmark run after our load in the same Redis trials). " +
		"The seed ran on another machine: compare ratios, not absolute rates.\n\n")
	b.WriteString("### Throughput (ops/sec)\n\n| Configuration | Client | SET/PUT | GET |\n|---|---|---:|---:|\n")
	fmt.Fprintf(&b, "| seed: Redis (persistence not stated; issue 12 reads it as none) | redis-benchmark | %.2f | %.2f |\n", kvSeedRedis["SET"], kvSeedRedis["GET"])
	fmt.Fprintf(&b, "| seed: Toska, HTTP/JSON, AOF | Erlang :httpc | %.2f | %.2f |\n", kvSeedToska["SET"], kvSeedToska["GET"])
	for _, row := range kvRows(st) {
		fmt.Fprintf(&b, "| %s, %s | wirebench | %s | %s |\n", row.label, row.persistence, kvRate(row.set.rps, row.set.trials), kvRate(row.get.rps, row.get.trials))
		if row.set.benchRPS > 0 || row.get.benchRPS > 0 {
			fmt.Fprintf(&b, "| %s, %s | redis-benchmark (same trials) | %s | %s |\n", row.label, row.persistence, kvRate(row.set.benchRPS, 1), kvRate(row.get.benchRPS, 1))
		}
	}
	b.WriteString("\n### Latency (ms)\n\n| Operation | Configuration | avg | p50 | p90 | p99 | errors |\n|---|---|---:|---:|---:|---:|---:|\n")
	for _, op := range []string{"SET", "GET"} {
		l := kvSeedToskaLatency[op]
		fmt.Fprintf(&b, "| %s | seed: Toska, HTTP/JSON, AOF (Erlang :httpc) | %.2f | %.2f | %.2f | %.2f | %.0f |\n", kvSeedOpName(op), l[0], l[1], l[2], l[3], l[4])
	}
	for _, s := range st {
		if s.trials == 0 {
			fmt.Fprintf(&b, "| %s | %s, %s | no successful trial | | | | |\n", s.op, s.label, s.persistence)
			continue
		}
		fmt.Fprintf(&b, "| %s | %s, %s | %s | %s | %s | %s | %d |\n", s.op, s.label, s.persistence, kvMS(s.avg), kvMS(s.p50), kvMS(s.p90), kvMS(s.p99), s.failed)
	}
	b.WriteString("\n### Ratios at matched persistence (same client)\n\n| Operation | Persistence | wirebench RESP / Redis | wirebench HTTP raw / Redis | wirebench HTTP JSON / Redis | wirebench client / redis-benchmark on Redis |\n|---|---|---:|---:|---:|---:|\n")
	for _, op := range []string{"SET", "GET"} {
		for _, p := range kvPersistences {
			redis := kvFind(st, op, p.title, "Redis")
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", op, p.title,
				kvRatio(kvFind(st, op, p.title, "wirebench RESP").rps, redis.rps),
				kvRatio(kvFind(st, op, p.title, "wirebench HTTP raw").rps, redis.rps),
				kvRatio(kvFind(st, op, p.title, "wirebench HTTP JSON").rps, redis.rps),
				kvRatio(redis.rps, redis.benchRPS))
		}
	}
	b.WriteString(kvClientCheck(st))
	b.WriteString(kvLikeForLike)
	if w := kvDataDirNote(); w != "" {
		b.WriteString("\n" + w + "\n")
	}
	return []string{b.String()}
}

const kvLikeForLike = `
### Which comparisons are like for like

- **Like for like:** cells of one group (same operation, same persistence), e.g. Redis with AOF everysec against wirebench RESP with AOF everysec: same client, same settings, same machine, client and server on separate CPUs, fresh server per trial.
- **Like for like, a different question:** wirebench HTTP raw and JSON against wirebench RESP and Redis at AOF everysec: same client and persistence; the difference is the protocol (and, for JSON, the encoding): what HTTP costs, the seed's question asked fairly.
- **Not like for like:** the seed's Redis against the seed's Toska: protocol (RESP against HTTP/JSON), client (C redis-benchmark against Erlang :httpc) and persistence (none against AOF) all differ, so its 9–12× mixes three causes.
- **Not like for like:** the seed's Redis (no persistence) against any AOF cell here, ours or Redis's: persistence differs.
- **Not a server comparison:** redis-benchmark against our client on the same Redis trials: one server, two clients; the ratio checks our client (a ratio near 1 means our client does not limit the Redis cells).
- **Not comparable in absolute terms:** the seed's rates against ours: other machine, other run.
`

// kvClientCheck sets the two clients side by side on the Redis cells,
// with their own CPU: pinned to one CPU, a client that keeps it busy is
// the bottleneck, and the rate ratio then compares clients, not Redis.
func kvClientCheck(st []kvCellStats) string {
	var b strings.Builder
	b.WriteString("\n### The two clients on the same Redis trials\n\n" +
		"| Operation | Persistence | wirebench client req/s | its CPU/req | its CPU busy | redis-benchmark req/s | its CPU/req | its CPU busy |\n" +
		"|---|---|---:|---:|---:|---:|---:|---:|\n")
	bound := false
	for _, op := range []string{"SET", "GET"} {
		for _, p := range kvPersistences {
			r := kvFind(st, op, p.title, "Redis")
			if r.trials == 0 {
				continue
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", op, p.title,
				kvRate(r.rps, r.trials), kvNS(r.cpuPerReq), kvShare(r.cpuShare),
				kvRate(r.benchRPS, 1), kvNS(r.benchCPUPerReq), kvShare(r.benchCPUShare))
			bound = bound || r.benchCPUShare >= kvClientBound
		}
	}
	b.WriteString("\nBoth clients run on the client's CPUs (redis-benchmark inherits them from the study); redis-benchmark is one thread. ")
	if bound {
		fmt.Fprintf(&b, "Where it kept its CPU busy (≥ %.0f%%), it, not Redis, set its rate, and the ratio in the last column of the "+
			"table above compares the clients' CPU per request. ", kvClientBound*100)
	} else {
		fmt.Fprintf(&b, "It kept its CPU below %.0f%% busy in every cell here: its rate was set by Redis or by other load on the machine, not by its own CPU cost. ", kvClientBound*100)
	}
	b.WriteString("An unpinned run by hand gives a ratio nearer 1 for another reason: Go's client then spreads over every CPU, " +
		"the server's too, and takes CPU from Redis (issue 41, measured in docs/kv.md). The server comparisons above are made " +
		"with one client for both servers, so they hold either way; server CPU per request is the figure least moved by the client.\n")
	return b.String()
}

// kvClientBound is the CPU share above which a client is its own bottleneck.
const kvClientBound = 0.9

func kvNS(ns float64) string {
	if ns <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f µs", ns/1e3)
}

func kvShare(s float64) string {
	if s <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f%%", s*100)
}

type kvRow struct {
	label, persistence string
	set, get           kvCellStats
}

// kvRows pairs each configuration's SET and GET cells, in cell order.
func kvRows(st []kvCellStats) []kvRow {
	var rows []kvRow
	for _, s := range st {
		if s.op != "SET" {
			continue
		}
		rows = append(rows, kvRow{label: s.label, persistence: s.persistence, set: s, get: kvFind(st, "GET", s.persistence, s.label)})
	}
	slices.SortStableFunc(rows, func(a, b kvRow) int { return strings.Compare(kvOrder(a.label), kvOrder(b.label)) })
	return rows
}

// kvOrder puts Redis first, then wirebench RESP, then HTTP.
func kvOrder(label string) string {
	switch {
	case label == "Redis":
		return "0"
	case strings.Contains(label, "RESP"):
		return "1"
	}
	return "2" + label
}

func kvFind(st []kvCellStats, op, persistence, label string) kvCellStats {
	for _, s := range st {
		if s.op == op && s.persistence == persistence && s.label == label {
			return s
		}
	}
	return kvCellStats{}
}

func kvSeedOpName(op string) string {
	if op == "SET" {
		return "PUT"
	}
	return op
}

func kvRate(v float64, trials int) string {
	if trials == 0 || v == 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f", v)
}

func kvMS(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }

func kvRatio(a, b float64) string {
	if a == 0 || b == 0 || math.IsNaN(a/b) {
		return "–"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

// kvDataDirNote names the filesystem the AOF cells wrote to: on tmpfs an
// fsync costs nothing and "always" means little.
func kvDataDirNote() string {
	dir := os.TempDir()
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil {
		return ""
	}
	kind := fmt.Sprintf("filesystem type 0x%x", fs.Type)
	switch fs.Type {
	case unix.TMPFS_MAGIC:
		kind = "tmpfs: fsync costs nothing there, so the AOF cells do not measure the disk"
	case unix.EXT4_SUPER_MAGIC:
		kind = "ext4"
	case unix.XFS_SUPER_MAGIC:
		kind = "xfs"
	case unix.BTRFS_SUPER_MAGIC:
		kind = "btrfs"
	case unix.OVERLAYFS_SUPER_MAGIC:
		kind = "overlayfs"
	}
	return fmt.Sprintf("Data directories (AOF cells): under %s (%s), one per trial, removed after it.", dir, kind)
}
