package study

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wirebench/wirebench/load/scenario"
	"github.com/wirebench/wirebench/report"
	"github.com/wirebench/wirebench/results"
)

// The replication cell of study kv (issue 13): SET throughput of a
// wirebench leader at AOF everysec with no follower and with one
// (serve --replica-of), and that follower's lag under the load.
const (
	kvReplGroup = "SET, AOF everysec, replication"
	// kvReplSampleEvery is how often the lag is sampled during the load.
	kvReplSampleEvery = 100 * time.Millisecond
	// kvReplCatchUp bounds the wait for the follower after the load.
	kvReplCatchUp = time.Minute
)

// Names of the figures the follower's check records (Trial.External).
const (
	kvReplLagBytesMax   = "follower lag bytes max"
	kvReplLagBytesMed   = "follower lag bytes median"
	kvReplLagSecondsMax = "follower lag seconds max"
	kvReplCatchUpSec    = "follower catch-up seconds"
	kvReplSamples       = "follower lag samples"
)

// kvReplAdd adds the replication cells and their notes to study kv.
func kvReplAdd(def *Definition) {
	p := kvPersistences[1] // AOF everysec
	if p.key != "everysec" {
		panic("study: kvPersistences[1] is not everysec")
	}
	for _, followers := range []int{0, 1} {
		def.Cells = append(def.Cells, kvReplCell(followers))
	}
	notes := def.Notes
	def.Notes = func(res *results.Study) []string {
		var out []string
		if notes != nil {
			out = notes(res)
		}
		rn := kvReplNotes(res)
		switch {
		case rn == "":
		case len(out) == 0:
			out = []string{rn}
		default:
			out[len(out)-1] += "\n" + rn // one note: the report's one section
		}
		return out
	}
}

// kvReplCell is the leader (RESP on {port}, HTTP on {port2}) and, with a
// follower, a second wirebench serve --replica-of on {port3} that the
// check starts before the warm-up and stops after the load.
func kvReplCell(followers int) Cell {
	dir := kvDataDir(fmt.Sprintf("wirebench-repl%d", followers))
	args := []string{"--resp", "127.0.0.1:{port}", "--http", "127.0.0.1:{port2}", "--no-grpc", "--seed-users", "0", "--seed-todos", "0",
		"--data-dir", filepath.Join(dir, "leader"), "--appendfsync", "everysec"}
	c := Cell{
		Group: kvReplGroup, Label: fmt.Sprintf("wirebench RESP, %d follower(s)", followers), Baseline: followers == 0, ServeArgs: args,
		Server: &Server{Command: kvWithDir(dir, append([]string{"{wirebench}", "serve"}, args...)...)},
		Load:   kvLoad(scenario.ScenarioKVSet, scenario.ProtocolRESP, "redis://127.0.0.1:{port}"),
	}
	if followers == 0 {
		c.Checks = kvDataChecks(dir)
	} else {
		c.Checks = kvDataChecks(dir, kvFollowerCheck(filepath.Join(dir, "follower")))
	}
	return c
}

// kvFollowerCheck starts the follower (on the server's CPUs when the
// study pins them), waits for its first sync, samples the lag during the
// load — the leader's offset minus the follower's, both read from their
// /metrics — and after the load measures how long the follower takes to
// catch up, then stops it. The check's figures go to Trial.External.
func kvFollowerCheck(dir string) Check {
	var mu sync.Mutex
	type run struct {
		cmd     *exec.Cmd
		stop    chan struct{}
		done    chan struct{}
		bytes   []float64
		seconds []float64
	}
	runs := map[*results.Trial]*run{}
	leader, follower := "http://127.0.0.1:{port2}/metrics", "http://127.0.0.1:{port3}/metrics"
	return Check{
		Name:      "follower (serve --replica-of)",
		templates: []string{dir, leader, follower, "{wirebench}"},
		Before: func(ctx context.Context, e *TrialEnv) error {
			args := []string{"serve", "--replica-of", e.Expand("http://127.0.0.1:{port2}"), "--http", e.Expand("127.0.0.1:{port3}"),
				"--no-grpc", "--seed-users", "0", "--seed-todos", "0", "--data-dir", e.Expand(dir), "--appendfsync", "everysec"}
			if cpus := e.Trial.ServerCPUs; len(cpus) > 0 {
				args = append(args, "--cpus", cpuArg(cpus))
			}
			cmd := exec.Command(e.Expand("{wirebench}"), args...)
			// The follower dies with the study even when the trial fails
			// before After runs.
			cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
			if err := cmd.Start(); err != nil {
				return fmt.Errorf("study: starting the follower: %w", err)
			}
			r := &run{cmd: cmd, stop: make(chan struct{}), done: make(chan struct{})}
			mu.Lock()
			runs[e.Trial] = r
			mu.Unlock()
			fURL, lURL := e.Expand(follower), e.Expand(leader)
			deadline := time.Now().Add(DefaultReadyTimeout)
			for {
				m, err := scrape(ctx, fURL)
				if err == nil && m[`wirebench_kv_repl_link`] == 1 {
					break
				}
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					cmd.Wait()
					return fmt.Errorf("study: the follower did not sync within %v (last: %v)", DefaultReadyTimeout, err)
				}
				time.Sleep(50 * time.Millisecond)
			}
			go func() {
				defer close(r.done)
				t := time.NewTicker(kvReplSampleEvery)
				defer t.Stop()
				for {
					select {
					case <-r.stop:
						return
					case <-t.C:
					}
					// Both at once: read one after the other, the
					// second would see the follower further along.
					var lm map[string]float64
					var err1 error
					got := make(chan struct{})
					go func() { lm, err1 = scrape(ctx, lURL); close(got) }()
					fm, err2 := scrape(ctx, fURL)
					<-got
					if err1 != nil || err2 != nil {
						continue
					}
					r.bytes = append(r.bytes, max(lm[`wirebench_kv_repl_offset{of="leader"}`]-fm[`wirebench_kv_repl_offset{of="follower"}`], 0))
					r.seconds = append(r.seconds, fm[`wirebench_kv_repl_lag_seconds`])
				}
			}()
			return nil
		},
		After: func(ctx context.Context, e *TrialEnv) error {
			mu.Lock()
			r := runs[e.Trial]
			delete(runs, e.Trial)
			mu.Unlock()
			if r == nil {
				return nil
			}
			close(r.stop)
			<-r.done
			defer func() {
				r.cmd.Process.Signal(syscall.SIGTERM)
				waited := make(chan struct{})
				go func() { r.cmd.Wait(); close(waited) }()
				select {
				case <-waited:
				case <-time.After(DefaultStopGrace):
					r.cmd.Process.Kill()
					<-waited
				}
				os.RemoveAll(e.Expand(dir))
			}()
			start := time.Now()
			for {
				lm, err1 := scrape(ctx, e.Expand(leader))
				fm, err2 := scrape(ctx, e.Expand(follower))
				if err1 == nil && err2 == nil && fm[`wirebench_kv_repl_offset{of="follower"}`] >= lm[`wirebench_kv_repl_offset{of="leader"}`] {
					break
				}
				if time.Since(start) > kvReplCatchUp {
					return fmt.Errorf("study: the follower did not catch up within %v after the load", kvReplCatchUp)
				}
				time.Sleep(20 * time.Millisecond)
			}
			setExternal(e.Trial, kvReplCatchUpSec, time.Since(start).Seconds())
			setExternal(e.Trial, kvReplSamples, float64(len(r.bytes)))
			if len(r.bytes) > 0 {
				setExternal(e.Trial, kvReplLagBytesMax, slices.Max(r.bytes))
				setExternal(e.Trial, kvReplLagBytesMed, kvMedian(r.bytes))
				setExternal(e.Trial, kvReplLagSecondsMax, slices.Max(r.seconds))
			}
			return nil
		},
	}
}

func cpuArg(cpus []int) string {
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, ",")
}

// scrape reads the unlabelled and labelled gauges of a Prometheus text
// page into a map keyed by the series as written ("name{labels}").
func scrape(ctx context.Context, url string) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	return out, sc.Err()
}

// nanos turns seconds into nanoseconds, for kvLatency.
func nanos(secs []float64) []float64 {
	out := make([]float64, len(secs))
	for i, s := range secs {
		out[i] = s * 1e9
	}
	return out
}

// kvReplNotes is the replication table: throughput with 0 and 1
// follower, the ratio, and the follower's lag.
// "" when the run had no replication cell (study --cells left them out).
func kvReplNotes(res *results.Study) string {
	if !slices.ContainsFunc(res.Cells, func(c results.Cell) bool { return c.Group == kvReplGroup }) {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Replication (issue 13)\n\nSET at AOF everysec, the seed's settings, against a wirebench leader alone and with one " +
		"follower (`serve --replica-of`, AOF everysec, on the server's CPUs: it competes with the leader for them). " +
		"Lag: the leader's replication offset minus the follower's, both read from /metrics every 100 ms during the load; " +
		"lag seconds is the follower's `wirebench_kv_repl_lag_seconds` (from the leader recording a record to the follower applying it); catch-up: " +
		"from the end of the load until the follower reaches the leader's offset. " + report.SpreadNote() + "\n\n")
	b.WriteString("| Followers | SET/s | vs 0 followers | lag bytes (median / max) | lag seconds max | catch-up |\n|---|---:|---:|---:|---:|---:|\n")
	var base []float64
	for _, c := range res.Cells {
		if c.Group != kvReplGroup {
			continue
		}
		var rps, med, mx, sec, cu []float64
		for _, t := range res.TrialsOf(c.ID) {
			rps = append(rps, t.Load.RPS())
			if v, ok := t.External[kvReplLagBytesMed]; ok {
				med, mx, sec = append(med, v), append(mx, t.External[kvReplLagBytesMax]), append(sec, t.External[kvReplLagSecondsMax])
			}
			if v, ok := t.External[kvReplCatchUpSec]; ok {
				cu = append(cu, v)
			}
		}
		if c.Baseline {
			base = rps
		}
		lag := "–"
		if len(med) > 0 {
			lag = kvSpread(report.UnitBytes, med) + " / " + kvSpread(report.UnitBytes, mx)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", c.Label, kvRate(rps), kvRatioOf(rps, base), lag, kvLatency(nanos(sec)), kvLatency(nanos(cu)))
	}
	return b.String()
}
