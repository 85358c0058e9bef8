package study

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/report"
)

// Run executes def and returns its results. Trial failures are recorded in
// the results, not returned; an error means the study could not run at all.
func Run(ctx context.Context, def Definition, opts Options) (*report.Results, error) {
	opts = opts.withDefaults()
	if def.SeedUsers == 0 {
		def.SeedUsers = 100
	}
	if def.SeedTodos == 0 {
		def.SeedTodos = 100
	}
	if opts.Binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("study: find the wirebench binary: %w", err)
		}
		opts.Binary = exe
	}
	res := &report.Results{
		Schema: report.Schema, Study: def.Name, Title: def.Title, Quick: opts.Quick, Seed: opts.Seed,
		Start: time.Now(),
	}
	if opts.Quick {
		res.Warnings = append(res.Warnings, fmt.Sprintf("quick run: %d trials of %v after %v warm-up per cell; publish only a full run", opts.Trials, opts.Duration, opts.Warmup))
	}

	restore, pinWarn := pin(&opts)
	defer restore()
	if pinWarn != "" {
		res.Warnings = append(res.Warnings, pinWarn)
	}
	res.Env = measure.Environment(ctx)
	res.Options = map[string]any{
		"trials": opts.Trials, "warmup": opts.Warmup.String(), "duration": opts.Duration.String(),
		"seed": opts.Seed, "quick": opts.Quick, "client_cpus": opts.ClientCPUs, "server_cpus": opts.ServerCPUs,
		"seed_users": def.SeedUsers, "seed_todos": def.SeedTodos, "binary": opts.Binary, "serve_args": opts.ServeArgs,
	}
	for _, c := range def.Cells {
		res.Cells = append(res.Cells, report.Cell{ID: c.ID(), Group: c.Group, Label: c.Label, ServeArgs: c.Serve, Load: c.describe()})
	}

	order := trialOrder(len(def.Cells), opts.Trials, opts.Seed)
	for i, tr := range order {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		cell := def.Cells[tr.cell]
		t := runTrial(ctx, def, cell, opts)
		t.Index, t.Order = tr.index, i
		res.Trials = append(res.Trials, t)
		opts.Progress(progressLine(i+1, len(order), cell, t))
	}

	if def.Measure != nil {
		p, err := def.Measure(Context{Options: opts, Log: func(f string, a ...any) { opts.Progress(fmt.Sprintf(f, a...)) }})
		if err != nil {
			return res, fmt.Errorf("study %s: %w", def.Name, err)
		}
		res.Payloads = p
	}
	res.End = time.Now()
	return res, nil
}

// quickRequests caps fixed-count cells in a quick run.
const quickRequests = 20_000

type trialRef struct{ cell, index int }

// trialOrder interleaves the cells: round r runs every cell's r-th trial,
// in an order shuffled per round with the recorded seed, so that drift of
// the machine over the run favours no cell.
func trialOrder(cells, trials int, seed int64) []trialRef {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x5eed))
	var out []trialRef
	for r := range trials {
		perm := rng.Perm(cells)
		for _, c := range perm {
			out = append(out, trialRef{cell: c, index: r})
		}
	}
	return out
}

func runTrial(ctx context.Context, def Definition, cell Cell, opts Options) report.Trial {
	t := report.Trial{Cell: cell.ID(), ServerCPUs: opts.ServerCPUs, ClientCPUs: opts.ClientCPUs}
	args := []string{"--seed-users", strconv.Itoa(def.SeedUsers), "--seed-todos", strconv.Itoa(def.SeedTodos)}
	if len(opts.ServerCPUs) > 0 {
		args = append(args, "--cpus", cpuList(opts.ServerCPUs))
	}
	args = append(append(args, cell.Serve...), opts.ServeArgs...)
	srv, err := startServer(ctx, opts.Binary, args)
	if err != nil {
		t.Error = err.Error()
		return t
	}
	t.ServerPID = srv.pid()
	fail := func(err error) report.Trial {
		t.Error = err.Error()
		srv.kill()
		return t
	}
	if t.UsersBefore, t.TodosBefore, err = srv.datasetSize(ctx); err != nil {
		return fail(err)
	}
	if opts.Warmup > 0 {
		warm := cell.Load
		warm.Duration, warm.Requests = opts.Warmup, 0
		sc, err := cell.Scenario(srv.httpAddr, srv.grpcAddr)
		if err != nil {
			return fail(err)
		}
		if _, err := load.Run(ctx, warm, sc); err != nil {
			return fail(fmt.Errorf("warm-up: %w", err))
		}
	}
	// A fresh scenario for the measured run: nothing (connections, pools)
	// carries over from the warm-up but the server's own warmth.
	sc, err := cell.Scenario(srv.httpAddr, srv.grpcAddr)
	if err != nil {
		return fail(err)
	}
	lo := cell.Load
	if lo.Duration == 0 && lo.Requests == 0 {
		lo.Duration = opts.Duration
	}
	if opts.Quick && lo.Requests > quickRequests {
		lo.Requests = quickRequests
	}
	smp, err := startSampler(t.ServerPID, SampleInterval)
	if err != nil {
		return fail(err)
	}
	t.Load, err = load.Run(ctx, lo, sc)
	t.Server = smp.stop()
	if err != nil {
		return fail(err)
	}
	if t.Server.GoMem, err = srv.goMem(ctx); err != nil {
		return fail(err)
	}
	if t.UsersAfter, t.TodosAfter, err = srv.datasetSize(ctx); err != nil {
		return fail(err)
	}
	if err := srv.stop(); err != nil {
		t.Error = err.Error()
	}
	return t
}

func (c Cell) describe() map[string]any {
	d := map[string]any{}
	for k, v := range c.Describe {
		d[k] = v
	}
	d["concurrency"] = c.Load.Concurrency
	if c.Load.Rate > 0 {
		d["rate"] = c.Load.Rate
	}
	if c.Load.Requests > 0 {
		d["requests"] = c.Load.Requests
	}
	return d
}

func progressLine(i, n int, c Cell, t report.Trial) string {
	head := fmt.Sprintf("[%d/%d] %-28s trial %d", i, n, c.ID(), t.Index+1)
	if t.Error != "" {
		return head + ": ERROR " + t.Error
	}
	r := t.Load
	return fmt.Sprintf("%s: %9.0f req/s  p50 %-9v p99 %-9v failed %d  server pid %d", head, r.RPS(),
		r.Latency.Quantile(0.50), r.Latency.Quantile(0.99), r.Failed, t.ServerPID)
}

// pin places this process (the client) and the servers on separate CPUs
// when there are at least two (fairness rule 4), and returns a function
// restoring the previous affinity.
func pin(o *Options) (restore func(), warning string) {
	restore = func() {}
	if o.NoPin {
		o.ClientCPUs, o.ServerCPUs = nil, nil
		return restore, "pinning off (--no-pin): client and server share CPUs"
	}
	avail := measure.Affinity()
	if len(o.ClientCPUs) == 0 && len(o.ServerCPUs) == 0 {
		if len(avail) < 2 {
			return restore, fmt.Sprintf("only %d CPU available: client and server share it, so client load inflates server latency", len(avail))
		}
		o.ClientCPUs, o.ServerCPUs = avail[:1], avail[1:]
	}
	if len(o.ClientCPUs) > 0 {
		prevProcs := runtime.GOMAXPROCS(0)
		if err := measure.Pin(o.ClientCPUs); err != nil {
			o.ClientCPUs = nil
			return restore, "could not pin the client: " + err.Error()
		}
		restore = func() {
			_ = measure.Pin(avail)
			runtime.GOMAXPROCS(prevProcs)
		}
		o.ClientCPUs = measure.Affinity() // what was granted
	}
	return restore, ""
}

func cpuList(cpus []int) string {
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, ",")
}
