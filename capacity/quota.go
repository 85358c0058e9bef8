package capacity

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/wirebench/wirebench/internal/cpuquota"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// A server's CPU quota, where the client cannot outrun the server: a
// short closed-loop run measures each side's CPU per request, and the
// server gets the largest quota at which its limit costs the client no
// more than QuotaHeadroom of its CPUs.
const (
	// QuotaHeadroom: the judge calls a step the client's at 90% of its
	// CPUs, and the search measures rates above the server's limit too.
	QuotaHeadroom = 0.45
	// MinAutoQuota: below it a quota's period (at least 1 ms of CPU per
	// period) grows past 10 ms, and throttling would be the tail latency.
	MinAutoQuota = 0.1
	quotaStep    = 0.05
	// LowerFactor: a search that ended on the client's limit under a
	// calibrated quota is measured again under this share of it. The
	// calibration is closed loop; an open-loop step near the server's
	// limit can cost the client more per request, or a noisy neighbour
	// can take the client's CPU for a while.
	LowerFactor = 0.7

	CalibrateWarmup   = 500 * time.Millisecond
	CalibrateDuration = 1500 * time.Millisecond
	CalibrateWorkers  = 64
)

// QuotaFor is the CPU quota (in CPUs) to give a server that costs server
// CPU per request when the client costs client on clientCPUs: 0 when the
// client outruns the server on serverCPUs without one. It is rounded
// down to 0.05 and at least MinAutoQuota.
func QuotaFor(client, server time.Duration, clientCPUs, serverCPUs int) float64 {
	if client <= 0 || server <= 0 {
		return 0
	}
	cores := QuotaHeadroom * float64(max(clientCPUs, 1)) * float64(server) / float64(client)
	if cores >= float64(max(serverCPUs, 1)) {
		return 0
	}
	q := math.Max(MinAutoQuota, math.Floor(cores/quotaStep+1e-9)*quotaStep)
	return math.Round(q*100) / 100
}

// LowerQuota is the quota to measure again under when a search ended on
// the client's limit under cores CPUs: LowerFactor of it, rounded down to
// 0.05 and at least MinAutoQuota; 0 when cores is at that floor already.
func LowerQuota(cores float64) float64 {
	if cores <= MinAutoQuota+1e-9 {
		return 0
	}
	q := math.Max(MinAutoQuota, math.Floor(LowerFactor*cores/quotaStep+1e-9)*quotaStep)
	return math.Round(q*100) / 100
}

// Calibrate runs sc closed loop against the server serverPID for a
// moment and returns the client's and the server's CPU per request.
func Calibrate(ctx context.Context, base load.Options, sc load.Scenario, serverPID int) (client, server time.Duration, err error) {
	o := base
	o.Open, o.Rate, o.Requests, o.Stages, o.StartTarget, o.Progress, o.Barrier = false, 0, 0, nil, 0, nil, nil
	o.Concurrency = CalibrateWorkers
	o.Duration = CalibrateWarmup
	if _, err := load.Run(ctx, o, sc); err != nil {
		return 0, 0, fmt.Errorf("calibration warm-up: %w", err)
	}
	before, err := measure.SampleProc(serverPID)
	if err != nil {
		return 0, 0, err
	}
	o.Duration = CalibrateDuration
	r, err := load.Run(ctx, o, sc)
	if err != nil {
		return 0, 0, fmt.Errorf("calibration: %w", err)
	}
	after, err := measure.SampleProc(serverPID)
	if err != nil {
		return 0, 0, err
	}
	if r.Requests-r.Failed <= 0 {
		return 0, 0, fmt.Errorf("calibration: no successful request (%d of %d failed)", r.Failed, r.Requests)
	}
	n := time.Duration(r.Requests)
	return (r.CPU.User + r.CPU.System) / n, (after.CPU() - before.CPU()) / n, nil
}

// ServerQuota puts the server serverPID under a CPU quota for a search:
// cores > 0 CPUs; 0 the quota a calibration of sc chooses where the client
// could not outrun the server (none where it can); < 0 none. What it
// decides is written to log. release puts the server back in its own
// group. A quota that cannot be had is an error when it was given, and a
// warning on log when it was chosen.
func ServerQuota(ctx context.Context, base load.Options, sc load.Scenario, serverPID int, cores float64, log io.Writer) (q *results.CPUQuota, release func(), err error) {
	release = func() {}
	if serverPID <= 0 || cores < 0 {
		return nil, release, nil
	}
	q = &results.CPUQuota{Cores: cores, Source: results.QuotaFlag}
	if cores == 0 {
		cl, sv, err := Calibrate(ctx, base, sc, serverPID)
		if err != nil {
			return nil, release, err
		}
		q = &results.CPUQuota{Source: results.QuotaCalibrated, ClientCPUPerRequest: cl, ServerCPUPerRequest: sv, ClientCPUs: len(measure.Affinity())}
		q.Cores = QuotaFor(cl, sv, q.ClientCPUs, len(measure.AffinityOf(serverPID)))
		if q.Cores == 0 {
			fmt.Fprintf(log, "calibration: client %s, server %s of CPU per request: the client outruns the server, no quota\n",
				results.FormatDuration(cl), results.FormatDuration(sv))
			return nil, release, nil
		}
	}
	q.Period = cpuquota.Period(q.Cores)
	g, err := cpuquota.New(cpuquota.Quota{Cores: q.Cores, Period: q.Period})
	if err == nil {
		if err = g.Add(serverPID); err != nil {
			g.Close()
		}
	}
	if err != nil {
		if q.Source == results.QuotaFlag {
			return nil, release, err
		}
		fmt.Fprintf(log, "WARNING: the server needs a CPU quota of %s for the client to outrun it, and cannot have one here (%v): the client may be the limit\n", q, err)
		return nil, release, nil
	}
	fmt.Fprintf(log, "server CPU quota: %s, %s\n", q, q.Why())
	return q, func() { _ = g.Close() }, nil
}
