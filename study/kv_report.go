package study

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/wirebench/wirebench/report"
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

// kvCellStats are a cell's per-trial figures over its successful trials;
// the tables print each as its median with its spread (report.FormatSpread).
type kvCellStats struct {
	id, op, persistence, label string
	trials                     int
	rps, benchRPS              []float64 // ours, redis-benchmark's (none: not run)
	// The clients' own CPU: per request (ns) and as a share of the run's
	// wall time (1: one CPU busy throughout); none when not measured.
	cpuPerReq, cpuShare, benchCPUPerReq, benchCPUShare []float64
	avg, p50, p90, p99                                 []float64 // ns
	srvCPU                                             []float64 // the server's CPU per request, ns
	failed, requests                                   int64
}

func kvStats(res *results.Study) []kvCellStats {
	var out []kvCellStats
	for _, c := range res.Cells {
		op, persistence, _ := strings.Cut(c.Group, ", ")
		s := kvCellStats{id: c.ID, op: op, persistence: persistence, label: c.Label}
		for _, t := range res.TrialsOf(c.ID) {
			r := t.Load
			s.trials++
			s.failed += r.Failed
			s.requests += r.Requests
			s.rps = append(s.rps, r.RPS())
			s.avg = append(s.avg, float64(r.Latency.Mean()))
			s.p50 = append(s.p50, float64(r.Latency.Quantile(0.50)))
			s.p90 = append(s.p90, float64(r.Latency.Quantile(0.90)))
			s.p99 = append(s.p99, float64(r.Latency.Quantile(0.99)))
			if t.Server.CPU > 0 && r.Requests > 0 {
				s.srvCPU = append(s.srvCPU, float64(t.Server.CPU)/float64(r.Requests))
			}
			if v, ok := t.External["redis-benchmark "+op+" rps"]; ok {
				s.benchRPS = append(s.benchRPS, v)
			}
			if c := r.CPU.User + r.CPU.System; c > 0 && r.Requests > 0 && r.Elapsed() > 0 {
				s.cpuPerReq = append(s.cpuPerReq, float64(c)/float64(r.Requests))
				s.cpuShare = append(s.cpuShare, float64(c)/float64(r.Elapsed()))
			}
			if v, ok := t.External[kvBenchCPUPerReq(op)]; ok {
				s.benchCPUPerReq = append(s.benchCPUPerReq, v)
			}
			if v, ok := t.External[kvBenchCPUShare(op)]; ok {
				s.benchCPUShare = append(s.benchCPUShare, v)
			}
		}
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
	n := kvTables(st) + kvBenchBoth(st) + kvVersusRedis(st)
	if sk := kvSkewNotes(res); sk != "" {
		n += "\n" + sk
	}
	if w := kvDataDirNote(); w != "" {
		n += "\n" + w + "\n"
	}
	return []string{n}
}

// kvVersusRedis sets, for every group with both servers (the seed's
// uniform cells and the skewed, pipelined twins), our RESP store's rate
// and p99 beside redis-server's from the same run, and says per group
// whether ours is at least Redis's rate with at most its p99 (the
// medians; the rate's Mann-Whitney test when the trials can decide).
func kvVersusRedis(st []kvCellStats) string {
	var b strings.Builder
	for _, ours := range st {
		if ours.label != "wirebench RESP" || ours.trials == 0 {
			continue
		}
		redis := kvFind(st, ours.op, ours.persistence, "Redis")
		if redis.trials == 0 {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("\n## wirebench RESP against redis-server, load by load: rate and p99\n\n" +
				"Each row is one group of this run: the same client, seed and commands for both servers, each on a fresh server per trial. " +
				"Ratios are ours over Redis's medians, with the range given both cells' spreads. " +
				"\"At or above\" asks for at least Redis's rate and at most its p99, on the medians; " +
				"the rate's test (Mann-Whitney) says whether the trials show a difference at all. " +
				"Server CPU per request (each server's user+system time over its requests) is the figure least moved by other load on a shared machine: " +
				"there the rate also measures which process the scheduler gave the CPU to.\n\n" +
				"| Operation | Load | Redis req/s | ours req/s | ours / Redis | Redis p99 | ours p99 | p99 ours / Redis | server CPU/req ours / Redis | at or above Redis? | rate test |\n" +
				"|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|\n")
		}
		rate, p99 := stats.Compare(redis.rps, ours.rps), stats.Compare(redis.p99, ours.p99)
		var short []string
		if rate.New.Center < rate.Old.Center {
			short = append(short, "rate")
		}
		if p99.New.Center > p99.Old.Center {
			short = append(short, "p99")
		}
		verdict := "yes"
		if len(short) > 0 {
			verdict = "no: " + strings.Join(short, ", ")
		}
		test := fmt.Sprintf("cannot tell with %d+%d trials", rate.Old.N, rate.New.N)
		switch {
		case rate.Decidable() && rate.Significant():
			test = fmt.Sprintf("differs (p = %.3f)", rate.P)
		case rate.Decidable():
			test = fmt.Sprintf("no difference shown (p = %.2f)", rate.P)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", ours.op, ours.persistence,
			kvRate(redis.rps), kvRate(ours.rps), kvRatioOf(ours.rps, redis.rps),
			kvLatency(redis.p99), kvLatency(ours.p99), kvRatioOf(ours.p99, redis.p99), kvRatioOf(ours.srvCPU, redis.srvCPU), verdict, test)
	}
	return b.String()
}

// kvTables are the notes' tables and text, from the cells' figures alone
// (kvNotes adds what depends on this machine).
func kvTables(st []kvCellStats) string {
	var b strings.Builder
	b.WriteString("## The seed beside this run\n\n")
	b.WriteString("Seed 002 (quoted): 100,000 requests, 50 connections, 128-byte values, 10,000 keys; Redis measured by redis-benchmark " +
		"(a C client, RESP), Toska (HTTP/JSON with an append-only file) by an Erlang :httpc client. Ours: the same settings, " +
		"every cell driven by wirebench's one client (redis-benchmark run after our load in the same Redis trials). " +
		"The seed ran on another machine: compare ratios, not absolute rates. The seed's figures are quoted as published (one run each, no spread). " +
		report.SpreadNote() + " A ratio is of two medians, with the range it may lie in given both cells' spreads.\n\n")
	b.WriteString("### Throughput (ops/sec)\n\n| Configuration | Client | SET/PUT | GET |\n|---|---|---:|---:|\n")
	fmt.Fprintf(&b, "| seed: Redis (persistence not stated; issue 12 reads it as none) | redis-benchmark | %.2f | %.2f |\n", kvSeedRedis["SET"], kvSeedRedis["GET"])
	fmt.Fprintf(&b, "| seed: Toska, HTTP/JSON, AOF | Erlang :httpc | %.2f | %.2f |\n", kvSeedToska["SET"], kvSeedToska["GET"])
	for _, row := range kvRows(st) {
		fmt.Fprintf(&b, "| %s, %s | wirebench | %s | %s |\n", row.label, row.persistence, kvRate(row.set.rps), kvRate(row.get.rps))
		if len(row.set.benchRPS) > 0 || len(row.get.benchRPS) > 0 {
			fmt.Fprintf(&b, "| %s, %s | redis-benchmark (same trials) | %s | %s |\n", row.label, row.persistence, kvRate(row.set.benchRPS), kvRate(row.get.benchRPS))
		}
	}
	b.WriteString("\n### Latency\n\n| Operation | Configuration | avg | p50 | p90 | p99 | errors |\n|---|---|---:|---:|---:|---:|---:|\n")
	for _, op := range []string{"SET", "GET"} {
		l := kvSeedToskaLatency[op]
		fmt.Fprintf(&b, "| %s | seed: Toska, HTTP/JSON, AOF (Erlang :httpc) | %.2fms | %.2fms | %.2fms | %.2fms | %.0f |\n", kvSeedOpName(op), l[0], l[1], l[2], l[3], l[4])
	}
	for _, s := range st {
		if s.trials == 0 {
			fmt.Fprintf(&b, "| %s | %s, %s | no successful trial | | | | |\n", s.op, s.label, s.persistence)
			continue
		}
		fmt.Fprintf(&b, "| %s | %s, %s | %s | %s | %s | %s | %d |\n", s.op, s.label, s.persistence, kvLatency(s.avg), kvLatency(s.p50), kvLatency(s.p90), kvLatency(s.p99), s.failed)
	}
	b.WriteString("\n### Ratios at matched persistence (same client)\n\n| Operation | Persistence | wirebench RESP / Redis | wirebench HTTP raw / Redis | wirebench HTTP JSON / Redis | wirebench client / redis-benchmark on Redis |\n|---|---|---:|---:|---:|---:|\n")
	for _, op := range []string{"SET", "GET"} {
		for _, p := range kvPersistences {
			redis := kvFind(st, op, p.title, "Redis")
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", op, p.title,
				kvRatioOf(kvFind(st, op, p.title, "wirebench RESP").rps, redis.rps),
				kvRatioOf(kvFind(st, op, p.title, "wirebench HTTP raw").rps, redis.rps),
				kvRatioOf(kvFind(st, op, p.title, "wirebench HTTP JSON").rps, redis.rps),
				kvRatioOf(redis.rps, redis.benchRPS))
		}
	}
	b.WriteString(kvClientCheck(st))
	b.WriteString(kvLikeForLike)
	return b.String()
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
		"| Operation | Persistence | wirebench client req/s | its CPU/req | its CPU busy (%) | redis-benchmark req/s | its CPU/req | its CPU busy (%) |\n" +
		"|---|---|---:|---:|---:|---:|---:|---:|\n")
	bound := false
	for _, op := range []string{"SET", "GET"} {
		for _, p := range kvPersistences {
			r := kvFind(st, op, p.title, "Redis")
			if r.trials == 0 {
				continue
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", op, p.title,
				kvRate(r.rps), kvLatency(r.cpuPerReq), kvShare(r.cpuShare),
				kvRate(r.benchRPS), kvLatency(r.benchCPUPerReq), kvShare(r.benchCPUShare))
			bound = bound || len(r.benchCPUShare) > 0 && stats.Summarize(r.benchCPUShare).Center >= kvClientBound
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

// kvSpread is a table cell of this run: the trials' median with its
// spread, in the report's notation; "–" when nothing was measured.
func kvSpread(u report.Unit, vs []float64) string {
	if len(vs) == 0 {
		return "–"
	}
	return report.FormatSpread(u, stats.Summarize(vs))
}

func kvRate(rps []float64) string { return kvSpread(report.UnitRate, rps) }

func kvLatency(ns []float64) string { return kvSpread(report.UnitDuration, ns) }

// kvShare is a CPU share in percent (the column's header says so).
func kvShare(shares []float64) string {
	pct := make([]float64, len(shares))
	for i, s := range shares {
		pct[i] = 100 * s
	}
	return kvSpread(report.UnitRate, pct)
}

// kvRatioOf is num's median over den's, with the range the ratio may lie
// in given both cells' spreads: "0.87× [0.80…0.95]".
func kvRatioOf(num, den []float64) string {
	if len(num) == 0 || len(den) == 0 {
		return "–"
	}
	d := stats.Compare(den, num)
	if d.Old.Center == 0 || d.New.Center == 0 {
		return "–"
	}
	return report.FormatRatio(d)
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
