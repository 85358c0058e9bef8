package capacity

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// ErrQuota marks a CPU quota that was given and cannot be had.
var ErrQuota = errors.New("server CPU quota")

// RunServer is Run against a server under its CPU quota: ServerQuota
// puts the server serverPID (0: none) under cores (given; 0 calibrated;
// < 0 none), the search counts capacity per core of that quota (else of
// the server's CPUs), and the result records the quota and the machine.
// The server goes back to its own group before RunServer returns.
func RunServer(ctx context.Context, opts Options, base load.Options, sc load.Scenario, serverPID int, cores float64, log io.Writer) (*results.Capacity, error) {
	quota, release, err := ServerQuota(ctx, base, sc, serverPID, cores, log)
	if err != nil && cores > 0 {
		return nil, fmt.Errorf("%w: %w", ErrQuota, err)
	} else if err != nil {
		return nil, err
	}
	defer release()
	if serverPID > 0 {
		opts.ServerCores = float64(len(measure.AffinityOf(serverPID)))
		if quota != nil {
			opts.ServerCores = quota.Cores
		}
	}
	res, err := Run(ctx, opts, base, sc, serverPID)
	if err != nil {
		return nil, err
	}
	res.ServerQuota = quota
	res.Env = measure.Environment(context.WithoutCancel(ctx))
	return res, nil
}
