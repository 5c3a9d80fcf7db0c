package job

import (
	"strings"

	"github.com/fairbench/fairbench/internal/livemetrics"
	"github.com/fairbench/fairbench/internal/runner"
)

// feedLive hands each measured interval to the live metrics endpoint, when there is one, and
// returns the function that marks the series finished.
func (j *Job) feedLive(cfg *runner.Config, version string) (done func()) {
	if j.Live == nil {
		return func() {}
	}
	l := livemetrics.Labels{Engine: string(j.Target.Kind), Version: versionNumber(version), Workload: j.Spec.Name, Kind: "all"}
	prev := cfg.OnIntervalDetail
	cfg.OnIntervalDetail = func(d runner.IntervalDetail) {
		iv := d.Interval
		j.Live.Add(l, livemetrics.Sample{Transactions: d.Transactions, Errors: d.Errors, Retries: d.Retries,
			Clients: iv.Threads, Latency: d.Latency, Lag: d.Lag, ServerCPUPct: iv.ServerCPUPct, ServerMemMB: iv.ServerMemMB,
			DiskReadBytes: iv.ServerDiskReadBytes, DiskWriteBytes: iv.ServerDiskWriteBytes,
			DiskReadOps: iv.ServerDiskReadOps, DiskWriteOps: iv.ServerDiskWriteOps})
		if prev != nil {
			prev(d)
		}
	}
	return func() { j.Live.Done(l) }
}

// versionNumber is the first word of a version string that starts with a digit: "15.18" of
// "PostgreSQL 15.18 (Debian ...)", "10.11.19-MariaDB" of the MariaDB one.
func versionNumber(v string) string {
	for _, w := range strings.Fields(v) {
		if w[0] >= '0' && w[0] <= '9' {
			return strings.TrimSuffix(w, ",")
		}
	}
	return v
}
