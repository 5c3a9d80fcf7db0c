package job

import (
	"github.com/fairbench/fairbench/internal/livemetrics"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/runner"
)

// feedLive hands each measured interval to the live metrics endpoint, when there is one, and
// returns the function that marks the series finished. A workload with transaction types gets
// one series per type beside the whole.
func (j *Job) feedLive(cfg *runner.Config, version string) (done func()) {
	if j.Live == nil {
		return func() {}
	}
	l := livemetrics.Labels{Engine: string(j.Target.Kind), Version: result.VersionNumber(version), Workload: j.Spec.Name, Kind: livemetrics.AllKinds}
	cfg.Observers = append(cfg.Observers, runner.Hooks{OnDetail: func(d runner.IntervalDetail) {
		iv := d.Interval
		j.Live.Add(l, livemetrics.Sample{Transactions: d.Transactions, Errors: d.Errors, Retries: d.Retries,
			Clients: iv.Threads, Latency: d.Latency, Lag: d.Lag, ServerCPUPct: iv.ServerCPUPct, ServerMemMB: iv.ServerMemMB,
			DiskReadBytes: iv.ServerDiskReadBytes, DiskWriteBytes: iv.ServerDiskWriteBytes,
			DiskReadOps: iv.ServerDiskReadOps, DiskWriteOps: iv.ServerDiskWriteOps})
		for _, k := range d.Kinds {
			kl := l
			kl.Kind = k.Kind
			j.Live.Add(kl, livemetrics.Sample{Transactions: k.Transactions, Errors: k.Errors, Retries: k.Retries, Latency: k.Latency})
		}
	}})
	return func() { j.Live.Done(l) }
}
