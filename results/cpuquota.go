package results

import (
	"fmt"
	"strconv"
	"time"
)

// Where a server's CPU quota came from (CPUQuota.Source).
const (
	QuotaCalibrated = "calibration" // chosen because the client could not outrun the server
	QuotaFlag       = "flag"        // --server-cpu-quota
	QuotaStudyFile  = "study file"  // a server's cpu_quota
	QuotaLowered    = "lowered"     // below the calibrated one, after a search ended on the client's limit
)

// CPUQuota is the CPU allowance a server ran under: a cgroup's CFS
// quota of Cores CPUs, granted per Period. A capacity measured under it
// is stated per core of the quota.
type CPUQuota struct {
	Cores  float64       `json:"cores"`
	Period time.Duration `json:"period_ns"`
	Source string        `json:"source"`
	// The calibration that chose it: each side's CPU per request in a
	// short closed-loop run, and the client's CPUs.
	ClientCPUPerRequest time.Duration `json:"client_cpu_per_req_ns,omitempty"`
	ServerCPUPerRequest time.Duration `json:"server_cpu_per_req_ns,omitempty"`
	ClientCPUs          int           `json:"client_cpus,omitempty"`
	// LoweredFrom is the quota (CPUs; 0: none) under which a search
	// ended on the client's limit, before this one was chosen.
	LoweredFrom float64 `json:"lowered_from,omitempty"`
}

// String reads "0.5 CPU (1ms per 2ms)".
func (q *CPUQuota) String() string {
	if q == nil {
		return "none"
	}
	per := time.Duration(q.Cores*float64(q.Period)/float64(time.Microsecond)) * time.Microsecond
	return fmt.Sprintf("%s CPU (%v per %v)", strconv.FormatFloat(q.Cores, 'f', -1, 64), per, q.Period)
}

// Why is how the quota was chosen, in a sentence's end.
func (q *CPUQuota) Why() string {
	switch q.Source {
	case QuotaCalibrated:
		s := "chosen by calibration"
		if q.ClientCPUPerRequest > 0 && q.ServerCPUPerRequest > 0 {
			s += fmt.Sprintf(": the client spends %s of CPU per request on %d CPU(s), the server %s, so without a quota the client would be the limit",
				FormatDuration(q.ClientCPUPerRequest), max(q.ClientCPUs, 1), FormatDuration(q.ServerCPUPerRequest))
		}
		return s
	case QuotaFlag:
		return "set by --server-cpu-quota"
	case QuotaStudyFile:
		return "set by the study file (cpu_quota)"
	case QuotaLowered:
		if q.LoweredFrom > 0 {
			return fmt.Sprintf("lowered from %s CPU, under which the client was the limit", strconv.FormatFloat(q.LoweredFrom, 'f', -1, 64))
		}
		return "lowered from the server's CPUs, with which the client was the limit"
	}
	return q.Source
}
