package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/fairbench/fairbench/internal/attach"
	"github.com/fairbench/fairbench/internal/job"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/runner"
	"github.com/fairbench/fairbench/internal/servermetrics"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// measureAttached runs the job with the server side watched as compare watches it (job.Measured):
// the engine's own counters over a connection of the monitor's own, and the host figures from h.
func measureAttached(ctx context.Context, j *job.Job, cfg runner.Config, h attach.Host) (*result.Result, error) {
	if j.PIDs == nil {
		j.PIDs = h.Processes()
	}
	mon, closeConns, err := attach.Watch(ctx, j.Target, j.Connect, h)
	if err != nil {
		return nil, err
	}
	defer closeConns()
	return j.Measured(ctx, cfg, mon, j.Run)
}

// findHostSource is attach.FindHost with an unreachable node_exporter as bad input.
func findHostSource(ctx context.Context, t sqldb.Target, nodeExporter string) (attach.Host, error) {
	h, err := attach.FindHost(ctx, t, nodeExporter)
	if err != nil {
		return h, badInput(err)
	}
	return h, nil
}

// printServer adds the server side to run's summary, each figure with its source.
func printServer(w io.Writer, s *result.Server) {
	if s == nil {
		return
	}
	fmt.Fprintf(w, "Server (host figures: %s):\n", s.CPUSource)
	if s.CPUSource != servermetrics.SourceRemote {
		fmt.Fprintf(w, "    CPU:                                 %.2fs user, %.2fs system (%.1f%% of the machine)\n", s.CPUUserS, s.CPUSystemS, s.CPUPct)
		if s.MemLoadMB > 0 {
			fmt.Fprintf(w, "    memory:                              %.1f MB idle, %.1f MB under load (anonymous %.1f, page cache %.1f)\n",
				s.MemIdleMB, s.MemLoadMB, s.MemAnonLoadMB, s.MemCacheLoadMB)
		}
		if s.DiskDevice != "" {
			fmt.Fprintf(w, "    disk (%s):%s%d bytes / %d ops read, %d bytes / %d ops written\n", s.DiskDevice,
				strings.Repeat(" ", max(1, 31-len(s.DiskDevice))), s.DiskReadBytes, s.DiskReadOps, s.DiskWriteBytes, s.DiskWriteOps)
			fmt.Fprintf(w, "    disk source:                         %s\n", s.DiskSource)
		}
		if c := s.DiskCgroup; c != nil {
			note := ""
			if strings.Contains(c.Source, "a lower bound") {
				note = " (a lower bound)"
			}
			fmt.Fprintf(w, "    disk as the cgroup counts it:        %d bytes / %d ops read, %d bytes / %d ops written%s\n",
				c.ReadBytes, c.ReadOps, c.WriteBytes, c.WriteOps, note)
		}
	}
	for _, what := range s.NotAvailable {
		fmt.Fprintf(w, "    %-37s%s\n", "not available:", what)
	}
	keys := make([]string, 0, len(s.PerTxn))
	for k := range s.PerTxn {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "    %-37s%.2f per txn\n", k+":", s.PerTxn[k])
	}
	printNodes(w, s)
}

// printNodes adds a cluster's nodes, one line each, and its replication over the run.
func printNodes(w io.Writer, s *result.Server) {
	if len(s.Nodes) == 0 {
		return
	}
	fmt.Fprintf(w, "    (%s)\n", s.Aggregate)
	for _, n := range s.Nodes {
		line := fmt.Sprintf("%.2fs CPU, %.2f WAL/redo bytes per txn", n.CPUUserS+n.CPUSystemS, n.PerTxn[servermetrics.KeyWALBytes])
		if n.Error != "" {
			line += "; " + n.Error
		}
		fmt.Fprintf(w, "    %-37s%s\n", fmt.Sprintf("%s %s (%s):", n.Name, n.Addr, n.Role), line)
	}
	if r := s.Replication; r != nil {
		b, _ := json.Marshal(r)
		fmt.Fprintf(w, "    %-37s%s\n", "replication:", b)
	}
}
