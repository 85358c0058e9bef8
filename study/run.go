package study

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// ErrDefinition marks a study that cannot run as defined.
var ErrDefinition = errors.New("study: bad definition")

// Run executes def and returns its results. Trial failures are recorded in
// the results, not returned; an error means the study could not run at all
// (a bad definition, a failed build, a cancelled context).
func Run(ctx context.Context, def Definition, opts Options) (*results.Study, error) {
	opts = opts.withDefaults(def)
	links := linksOf(def, opts)
	if err := checkLinks(links); err != nil {
		return nil, err
	}
	def.Cells = withLinks(withCapacity(def.Cells, opts.Capacity), links)
	if opts.Binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("study: find the wirebench binary: %w", err)
		}
		opts.Binary = exe
	}
	if err := validate(def); err != nil {
		return nil, err
	}
	if err := opts.Ports.Fits(def); err != nil {
		return nil, err
	}
	res := &results.Study{
		Schema: results.StudySchema, Study: def.Name, Title: def.Title, Question: def.Question, Answer: def.Answer, Quick: opts.Quick, Seed: opts.Seed,
		Start: time.Now(),
	}
	if opts.Quick {
		res.Warnings = append(res.Warnings, fmt.Sprintf("quick run: %d trials of %v after %v warm-up per cell; publish only a full run", opts.Trials, opts.Duration, opts.Warmup))
	}
	res.Warnings = append(res.Warnings, def.Warnings...)
	if len(links) > 0 {
		var note string
		if res.Answer, note = linkAnswer(res.Answer); note != "" {
			res.Warnings = append(res.Warnings, note)
		}
	}

	restore, pinWarn := pin(&opts)
	defer restore()
	if pinWarn != "" {
		res.Warnings = append(res.Warnings, pinWarn)
	}
	res.Env = measure.Environment(ctx)
	res.Options = results.StudyOptions{
		Trials: opts.Trials, Warmup: opts.Warmup.String(), Duration: opts.Duration.String(),
		Seed: opts.Seed, Quick: opts.Quick, ClientCPUs: opts.ClientCPUs, ServerCPUs: opts.ServerCPUs,
		Binary: opts.Binary, ServeArgs: opts.ServeArgs, Order: cmp.Or(def.Order, OrderShuffled),
		ServerCPUQuota: opts.ServerCPUQuota, StudyFile: def.Source, Links: links,
	}
	for _, b := range allBuilds(def) {
		res.Options.Builds = append(res.Options.Builds, strings.Join(b.Args, " "))
	}
	for i, c := range def.Cells {
		rc := results.Cell{ID: c.ID(), Group: c.Group, Label: c.Label, ServeArgs: c.ServeArgs, Load: describeLoad(c.Load),
			Baseline: isBaseline(def.Cells, i), External: c.External, Link: c.Link}
		if c.Capacity != nil {
			rc.Load.Measure = "capacity"
			for _, th := range c.Capacity.SLO {
				rc.Load.SLO = append(rc.Load.SLO, th.Expr)
			}
		}
		if c.Server != nil {
			rc.Command = append(append([]string(nil), c.Server.Command...), opts.ServeArgs...)
		} else {
			res.Warnings = append(res.Warnings, fmt.Sprintf("cell %s: server already running at %s: not restarted per trial, and not sampled (no server CPU or RSS)", c.ID(), c.External))
		}
		res.Cells = append(res.Cells, rc)
	}

	def.Cells = slices.Clone(def.Cells) // checkoutRevs points them at worktrees
	cleanup, err := checkoutRevs(ctx, &def, opts.Progress)
	defer cleanup() // the worktrees go, however the study ends
	if err != nil {
		return nil, err
	}
	for i, c := range def.Cells {
		if c.checkout != nil {
			res.Cells[i].Rev, res.Cells[i].Commit = c.checkout.rev, c.checkout.commit
		}
	}
	if err := runBuilds(ctx, def, opts); err != nil {
		return nil, err
	}
	quota, qwarn, err := chooseQuota(ctx, def, opts)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		qwarn = err.Error() + ": the servers run without a CPU quota"
	}
	if qwarn != "" {
		res.Warnings = append(res.Warnings, qwarn)
	}
	if opts.ServerCPUQuota == 0 && qwarn == "" {
		opts.lowered = map[string]*results.CPUQuota{} // quotas work here, and the study chooses them
	}
	if quota != nil {
		opts.quota, res.ServerQuota = quota, quota
		opts.Progress(fmt.Sprintf("server CPU quota: %s, %s", quota, quota.Why()))
	}
	var ids []string
	for _, c := range def.Cells {
		ids = append(ids, c.ID())
	}
	sl, err := openLinks(ctx, links, opts, res, ids)
	defer sl.close()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	order := trialOrder(len(def.Cells), opts.Trials, opts.Seed)
	if def.Order == OrderABBA {
		order = abbaOrder(len(def.Cells), opts.Trials)
	}
	warned := map[string]bool{}
	for i, tr := range order {
		if ctx.Err() != nil {
			return interrupted(ctx, res, order)
		}
		cell := def.Cells[tr.cell]
		t, warn := runTrial(ctx, cell, opts, sl.client(cell))
		for n := 0; n < maxLowerings && ctx.Err() == nil; n++ {
			q, ok := lowerTrialQuota(cell, t, opts)
			if !ok {
				break
			}
			line := loweredLine(cell, tr.index, t.ServerQuota, q)
			opts.Progress(line)
			res.Warnings = append(res.Warnings, line)
			t, warn = runTrial(ctx, cell, opts, sl.client(cell))
		}
		t.Index, t.Order = tr.index, i
		if ctx.Err() != nil { // cut by the signal: kept for the record, counted nowhere
			markCut(&t)
			res.Trials = append(res.Trials, t)
			opts.Progress(progressLine(i+1, len(order), cell, t))
			return interrupted(ctx, res, order)
		}
		res.Trials = append(res.Trials, t)
		if warn != "" && !warned[cell.ID()] {
			warned[cell.ID()] = true
			res.Warnings = append(res.Warnings, fmt.Sprintf("cell %s: %s", cell.ID(), warn))
		}
		opts.Progress(progressLine(i+1, len(order), cell, t))
	}

	if def.Measure != nil {
		p, err := def.Measure(Context{Options: opts, Log: func(f string, a ...any) { opts.Progress(fmt.Sprintf(f, a...)) }})
		if err != nil {
			return res, fmt.Errorf("study %s: %w", def.Name, err)
		}
		res.Payloads = p
	}
	if def.Notes != nil {
		res.Notes = def.Notes(res)
	}
	res.End = time.Now()
	return res, nil
}

// validate catches what would otherwise fail every trial alike.
func validate(def Definition) error {
	ids := map[string]bool{}
	for _, c := range def.Cells {
		if ids[c.ID()] {
			return fmt.Errorf("%w: two cells named %q", ErrDefinition, c.ID())
		}
		ids[c.ID()] = true
		if c.Server == nil && c.External == "" {
			return fmt.Errorf("%w: cell %s has neither a server nor an external URL", ErrDefinition, c.ID())
		}
		if c.Load.Empty() {
			return fmt.Errorf("%w: cell %s has no load", ErrDefinition, c.ID())
		}
		n, err := c.ports()
		if err != nil {
			return fmt.Errorf("%w: cell %s: %v", ErrDefinition, c.ID(), err)
		}
		if n > 0 && c.Server == nil {
			return fmt.Errorf("%w: cell %s: {port} needs a server started by the study", ErrDefinition, c.ID())
		}
	}
	return nil
}

// isBaseline reports whether cell i is its group's baseline: the marked
// cell, or the group's first when none is marked.
func isBaseline(cells []Cell, i int) bool {
	g := cells[i].Group
	first, marked := -1, -1
	for j, c := range cells {
		if c.Group != g || c.Link != cells[i].Link {
			continue
		}
		if first < 0 {
			first = j
		}
		if c.Baseline && marked < 0 {
			marked = j
		}
	}
	if marked >= 0 {
		return i == marked
	}
	return i == first
}

// runBuilds runs the study's build steps, then the cells', once each: a
// cell with a rev builds in its worktree, and cells sharing a rev and a
// build command build once.
func runBuilds(ctx context.Context, def Definition, opts Options) error {
	type step struct {
		b Command
		v vars
	}
	var steps []step
	for _, b := range def.Builds {
		steps = append(steps, step{b, vars{wirebench: opts.Binary}})
	}
	done := map[string]bool{}
	for _, c := range def.Cells {
		if c.Build == nil {
			continue
		}
		v := c.vars(opts.Binary)
		key := fmt.Sprintf("%s\x00%q\x00%s\x00%q", v.worktree, c.Build.Args, c.Build.Dir, c.Build.Env)
		if done[key] {
			continue
		}
		done[key] = true
		steps = append(steps, step{*c.Build, v})
	}
	for _, s := range steps {
		start := time.Now()
		_, out, err := s.b.run(ctx, s.v, DefaultBuildTimeout)
		where := ""
		if s.v.worktree != "" {
			where = " in " + s.v.dir(s.b.Dir)
		}
		if err != nil {
			return fmt.Errorf("study: build%s: %w%s", where, err, indentOutput(out))
		}
		opts.Progress(fmt.Sprintf("build: %s%s (%v)", strings.Join(s.v.expandAll(s.b.Args), " "), where, time.Since(start).Round(time.Millisecond)))
	}
	return nil
}

// allBuilds are the study's builds, then the cells'.
func allBuilds(def Definition) []Command {
	builds := slices.Clone(def.Builds)
	for _, c := range def.Cells {
		if c.Build != nil {
			builds = append(builds, *c.Build)
		}
	}
	return builds
}

func indentOutput(out string) string {
	if out == "" {
		return ""
	}
	return "\n\t" + strings.ReplaceAll(out, "\n", "\n\t")
}

// quickRequests caps fixed-count cells in a quick run.
const quickRequests = 20_000

// externalReadyTimeout bounds the check that an external server is up.
const externalReadyTimeout = 5 * time.Second

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

// runTrial runs one trial of cell: a fresh server on fresh ports, the
// checks' Before, warm-up, the measured load with the server sampled, the
// checks' After, and the server stopped. warn is a caveat for the whole
// cell (reported once).
func runTrial(ctx context.Context, cell Cell, opts Options, cl trialClient) (t results.Trial, warn string) {
	t = results.Trial{Cell: cell.ID(), ClientCPUs: opts.ClientCPUs}
	v := cell.vars(opts.Binary)
	var srv *proc
	fail := func(err error) (results.Trial, string) {
		t.Error = err.Error()
		if srv != nil {
			srv.kill()
		}
		return t, warn
	}
	if cell.Server != nil {
		n, _ := cell.ports() // validated by Run
		ports, err := freePorts(n, opts.Ports)
		if err != nil {
			return fail(err)
		}
		v.ports, t.Ports = ports, ports
		s := *cell.Server
		s.Command = append(append([]string(nil), s.Command...), opts.ServeArgs...)
		if srv, err = startProc(&s, v, opts.ServerCPUs); err != nil {
			return fail(err)
		}
		t.ServerPID = srv.pid()
		if q := trialQuota(cell, opts); q != nil {
			// Threads the server made before this are moved with it.
			release, err := applyQuota(q, t.ServerPID)
			defer release() // after the server is stopped or killed
			if err != nil {
				return fail(fmt.Errorf("server CPU quota %s: %w", q, err))
			}
			t.ServerQuota = q
		}
		if len(opts.ServerCPUs) > 0 {
			t.ServerCPUs = srv.cpus() // what the kernel granted
		}
		if len(opts.ClientCPUs) > 0 {
			// A thread the runtime made while this one was pinned for the
			// fork inherited the server's CPUs: put every thread back.
			_ = measure.Pin(opts.ClientCPUs)
		}
		ready := cmp.Or(v.expand(s.Ready), tcpTarget(v.expand(cell.Load.URL())))
		if err := srv.waitReady(ctx, ready, cmp.Or(s.ReadyTimeout, DefaultReadyTimeout)); err != nil {
			return fail(err)
		}
	} else if err := waitExternal(ctx, cell.External); err != nil {
		return fail(err)
	}
	env := &TrialEnv{Trial: &t, v: v}
	for _, c := range cell.Checks {
		if c.Before != nil {
			if err := c.Before(ctx, env); err != nil {
				return fail(err)
			}
		}
	}
	if opts.Warmup > 0 && cell.Capacity == nil { // a capacity search warms up at every step
		if err := cl.phase(ctx, cell, opts, v, &t, true); err != nil {
			return fail(err)
		}
	}
	for _, c := range cell.Checks {
		if c.Start != nil {
			if err := c.Start(ctx, env); err != nil {
				return fail(err)
			}
		}
	}
	var smp *sampler
	if srv != nil {
		var err error
		if smp, err = startSampler(t.ServerPID, SampleInterval); err != nil {
			return fail(err)
		}
		if kids := srv.children(); len(kids) > 0 {
			warn = fmt.Sprintf("the server process %d has child processes %v; only the PID started is sampled for CPU and RSS (start the server with exec, not through a shell or go run)", t.ServerPID, kids)
		}
	}
	err := cl.phase(ctx, cell, opts, v, &t, false)
	if w := t.Relay.Warning(); w != "" && warn == "" {
		warn = w
	}
	if smp != nil {
		t.Server = smp.stop()
		if t.Capacity != nil {
			t.Server.CPU = answerServerCPU(t.Capacity)
		}
	}
	if srv != nil && (err != nil || t.Load.Failed > 0) {
		if crash := srv.crashed(); crash != nil {
			return fail(crash) // the cause of the failed requests
		}
	}
	if err != nil {
		return fail(err)
	}
	if ok := t.Load.Requests - t.Load.Failed; ok <= 0 {
		return fail(fmt.Errorf("no successful request: %d of %d failed%s", t.Load.Failed, t.Load.Requests, topFailure(t.Load)))
	}
	var checkErr error
	for _, c := range cell.Checks {
		if c.After != nil {
			if err := c.After(ctx, env); err != nil && checkErr == nil {
				checkErr = err
			}
		}
	}
	if checkErr != nil {
		return fail(checkErr)
	}
	if srv != nil {
		if err := srv.stop(cmp.Or(cell.Server.StopSignal, defaultStopSignal), cmp.Or(cell.Server.StopGrace, DefaultStopGrace)); err != nil {
			t.Error = err.Error()
		}
	}
	return t, warn
}

// trialClient runs the client phases of a trial: here (localClient), or
// on the far side of the cell's link (linkAgent, links.go).
type trialClient interface {
	// phase runs the warm-up (its result dropped), or the measurement:
	// the load into t.Load, or the capacity search into t.Capacity and
	// t.Load.
	phase(ctx context.Context, cell Cell, opts Options, v vars, t *results.Trial, warmup bool) error
}

type localClient struct{}

func (localClient) phase(ctx context.Context, cell Cell, opts Options, v vars, t *results.Trial, warmup bool) error {
	return clientPhase(ctx, cell, opts, v, t, warmup)
}

// clientPhase is a trial's warm-up or measurement, run by this process.
func clientPhase(ctx context.Context, cell Cell, opts Options, v vars, t *results.Trial, warmup bool) error {
	if warmup {
		warm := cell.Load.Options
		// A ramp keeps its stages: the warm-up runs its beginning (load
		// stops at the shorter of Duration and the stages).
		warm.Duration, warm.Requests = opts.Warmup, 0
		if err := runLoad(ctx, cell.Load, warm, v, nil); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
		return nil
	}
	if cell.Capacity != nil {
		return searchCapacity(ctx, cell, opts, v, t)
	}
	lo := cell.Load.Options
	if lo.Duration == 0 && lo.Requests == 0 && len(lo.Stages) == 0 {
		lo.Duration = opts.Duration
	}
	if opts.Quick && lo.Requests > quickRequests {
		lo.Requests = quickRequests
	}
	return runLoad(ctx, cell.Load, lo, v, &t.Load)
}

// runLoad runs one load with a fresh scenario: nothing (connections,
// pools) carries over from the warm-up but the server's own warmth.
func runLoad(ctx context.Context, l LoadSpec, o load.Options, v vars, into **results.Load) error {
	l.Options = o
	m, err := newClient(l, v)
	if err != nil {
		return err
	}
	defer m.Close()
	if l.Raw != nil {
		m.Options.EventLoop = true // the cheapest client per request (load ignores it where it does not apply)
	}
	r, err := load.Run(ctx, m.Options, m.Scenario)
	if into != nil {
		*into = r
	}
	return err
}

// topFailure is ": <the most frequent failure reason>", for error lines.
func topFailure(r *results.Load) string {
	best, n := "", int64(0)
	for k, c := range r.Failures {
		if c > n || (c == n && k < best) {
			best, n = k, c
		}
	}
	if best == "" {
		return ""
	}
	return " (mostly " + best + ")"
}

// waitExternal checks that an already-running server accepts connections.
func waitExternal(ctx context.Context, u string) error {
	target := tcpTarget(u)
	deadline := time.Now().Add(externalReadyTimeout)
	for {
		err := probe(ctx, target)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("study: external server %s not reachable: %w", u, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func progressLine(i, n int, c Cell, t results.Trial) string {
	head := fmt.Sprintf("[%d/%d] %-28s trial %d", i, n, c.ID(), t.Index+1)
	if t.Error != "" {
		return head + ": ERROR " + t.Error
	}
	r := t.Load
	pid := "external server"
	if t.ServerPID > 0 {
		pid = fmt.Sprintf("server pid %d", t.ServerPID)
	}
	return fmt.Sprintf("%s: %9.0f req/s  p50 %-9v p99 %-9v failed %d  %s", head, r.RPS(),
		r.Latency.Quantile(0.50), r.Latency.Quantile(0.99), r.Failed, pid)
}

// Unsuccessful lists the cells of res without a single successful trial
// (the server never started, or no request succeeded), one line each with
// the first reason.
func Unsuccessful(res *results.Study) []string {
	var out []string
	for _, c := range res.Cells {
		n, reason := 0, ""
		ok := false
		for _, t := range res.Trials {
			if t.Cell != c.ID {
				continue
			}
			n++
			if t.Error == "" && t.Load != nil && t.Load.Requests > t.Load.Failed {
				ok = true
				break
			}
			if reason == "" {
				reason = t.Error
			}
		}
		if !ok && n > 0 {
			out = append(out, fmt.Sprintf("cell %s: no successful trial (%d of %d failed; first: %s)", c.ID, n, n, reason))
		}
	}
	return out
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
