package study

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/wirebench/wirebench/capacity"
	"github.com/wirebench/wirebench/internal/cpuquota"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// chooseQuota decides the CPU quota of the study's servers: the one given
// (Options.ServerCPUQuota > 0), none (< 0, or a study that measures no
// capacity), or, by default, the largest that leaves the client its
// headroom, found by calibrating each capacity cell — no quota if the
// client outruns the server as it is. warn says what the run should know.
func chooseQuota(ctx context.Context, def Definition, opts Options) (q *results.CPUQuota, warn string, err error) {
	switch {
	case opts.ServerCPUQuota > 0:
		p := cpuquota.Period(opts.ServerCPUQuota)
		return &results.CPUQuota{Cores: opts.ServerCPUQuota, Period: p, Source: results.QuotaFlag}, "", nil
	case opts.ServerCPUQuota < 0:
		return nil, "", nil
	}
	var cells []Cell
	for _, c := range def.Cells {
		if c.Capacity != nil && c.Server != nil && c.Server.CPUQuota == 0 {
			cells = append(cells, c)
		}
	}
	if len(cells) == 0 {
		return nil, "", nil
	}
	if _, err := cpuquota.RemoveStale(); errors.Is(err, cpuquota.ErrUnavailable) {
		return nil, fmt.Sprintf("no CPU quota for the servers (%v): where the client cannot outrun a server, the capacity found is the client's", err), nil
	}
	best := &results.CPUQuota{Source: results.QuotaCalibrated, ClientCPUs: max(1, len(opts.ClientCPUs))}
	serverCPUs := cmp.Or(len(opts.ServerCPUs), len(measure.Affinity()))
	for _, c := range cells {
		cl, sv, err := calibrate(ctx, c, opts)
		if err != nil {
			return nil, "", fmt.Errorf("study: calibrate the CPU quota on cell %s: %w", c.ID(), err)
		}
		opts.Progress(fmt.Sprintf("calibration %-28s client %s, server %s of CPU per request", c.ID(), results.FormatDuration(cl), results.FormatDuration(sv)))
		// The smallest quota any cell needs: one quota for every cell.
		if q := capacity.QuotaFor(cl, sv, best.ClientCPUs, serverCPUs); q > 0 && (best.Cores == 0 || q < best.Cores) {
			best.Cores, best.ClientCPUPerRequest, best.ServerCPUPerRequest = q, cl, sv
		}
	}
	if best.Cores == 0 {
		return nil, "", nil // the client outruns the servers as they are
	}
	best.Period = cpuquota.Period(best.Cores)
	return best, "", nil
}

// calibrate runs cell's load closed loop on a fresh server for a moment
// and returns the client's and the server's CPU per request.
func calibrate(ctx context.Context, cell Cell, opts Options) (client, server time.Duration, err error) {
	v := cell.vars(opts.Binary)
	n, _ := cell.ports()
	ports, err := freePorts(n, opts.Ports)
	if err != nil {
		return 0, 0, err
	}
	v.ports = ports
	s := *cell.Server
	s.Command = append(append([]string(nil), s.Command...), opts.ServeArgs...)
	srv, err := startProc(&s, v, opts.ServerCPUs)
	if err != nil {
		return 0, 0, err
	}
	defer srv.kill()
	if len(opts.ClientCPUs) > 0 {
		_ = measure.Pin(opts.ClientCPUs)
	}
	ready := cmp.Or(v.expand(s.Ready), tcpTarget(v.expand(cell.Load.URL())))
	if err := srv.waitReady(ctx, ready, cmp.Or(s.ReadyTimeout, DefaultReadyTimeout)); err != nil {
		return 0, 0, err
	}
	o := cell.Load.Options
	o.Open, o.Rate, o.Requests, o.Stages = false, 0, 0, nil
	o.Concurrency = min(cmp.Or(o.Concurrency, capacity.CalibrateWorkers), capacity.CalibrateWorkers)
	o.Duration = capacity.CalibrateWarmup
	if err := runLoad(ctx, cell.Load, o, v, nil); err != nil {
		return 0, 0, fmt.Errorf("warm-up: %w", err)
	}
	before, err := measure.SampleProc(srv.pid())
	if err != nil {
		return 0, 0, err
	}
	var r *results.Load
	o.Duration = capacity.CalibrateDuration
	if err := runLoad(ctx, cell.Load, o, v, &r); err != nil {
		return 0, 0, err
	}
	after, err := measure.SampleProc(srv.pid())
	if err != nil {
		return 0, 0, err
	}
	if ok := r.Requests - r.Failed; ok <= 0 {
		return 0, 0, fmt.Errorf("no successful request: %d of %d failed%s", r.Failed, r.Requests, topFailure(r))
	}
	per := func(d time.Duration) time.Duration { return d / time.Duration(r.Requests) }
	return per(r.CPU.User + r.CPU.System), per(after.CPU() - before.CPU()), nil
}

// trialQuota is the quota of cell's server: its own cpu_quota, else the
// one lowered for it, else the study's.
func trialQuota(cell Cell, opts Options) *results.CPUQuota {
	if cell.Server == nil {
		return nil
	}
	if q := cell.Server.CPUQuota; q > 0 {
		return &results.CPUQuota{Cores: q, Period: cpuquota.Period(q), Source: results.QuotaStudyFile}
	}
	if q := opts.lowered[cell.ID()]; q != nil {
		return q
	}
	return opts.quota
}

// maxLowerings bounds how often one trial is run again under a lower
// quota: each costs a whole search.
const maxLowerings = 2

// lowerTrialQuota decides whether trial t of cell, whose search ended on
// the client's limit, runs again under a lower quota, and records that
// quota for the cell's later trials: a study compares servers, and a
// client-bound search measured the client. Only a quota the study chose
// is lowered (not one given, nor a server's own cpu_quota), to
// capacity.LowerQuota of it (of the server's CPUs where it chose none).
// The cells then compare per core of their quotas (the report says so).
func lowerTrialQuota(cell Cell, t results.Trial, opts Options) (*results.CPUQuota, bool) {
	if opts.lowered == nil || t.Capacity == nil || t.Capacity.Limit != results.LimitClient ||
		cell.Server == nil || cell.Server.CPUQuota > 0 || t.Error != "" {
		return nil, false
	}
	cur := float64(cmp.Or(len(opts.ServerCPUs), len(measure.Affinity())))
	if t.ServerQuota != nil {
		cur = t.ServerQuota.Cores
	}
	next := capacity.LowerQuota(cur)
	if next <= 0 || next >= cur {
		return nil, false
	}
	q := &results.CPUQuota{Cores: next, Period: cpuquota.Period(next), Source: results.QuotaLowered}
	if t.ServerQuota != nil {
		q.LoweredFrom = cur
	}
	opts.lowered[cell.ID()] = q
	return q, true
}

// applyQuota puts the server pid under q; close removes the group (after
// the server has stopped).
func applyQuota(q *results.CPUQuota, pid int) (close func(), err error) {
	g, err := cpuquota.New(cpuquota.Quota{Cores: q.Cores, Period: q.Period})
	if err != nil {
		return func() {}, err
	}
	if err := g.Add(pid); err != nil {
		g.Close()
		return func() {}, err
	}
	return func() { _ = g.Close() }, nil
}

// loweredLine says that trial i of cell runs again under to.
func loweredLine(cell Cell, i int, from, to *results.CPUQuota) string {
	under := "no quota"
	if from != nil {
		under = "a quota of " + strconv.FormatFloat(from.Cores, 'f', -1, 64) + " CPU"
	}
	return fmt.Sprintf("cell %s: trial %d's search ended on the client's limit under %s; it ran again, and the cell's later trials run, under %s CPU",
		cell.ID(), i+1, under, strconv.FormatFloat(to.Cores, 'f', -1, 64))
}
