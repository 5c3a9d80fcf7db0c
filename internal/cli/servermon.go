package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"time"

	"github.com/fairbench/fairbench/internal/cgroup"
	"github.com/fairbench/fairbench/internal/engine"
	"github.com/fairbench/fairbench/internal/job"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/runner"
	"github.com/fairbench/fairbench/internal/servermetrics"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// hostSource says where a run by DSN gets the server's host figures: the cgroup of a throwaway
// server that a fairbench on this machine runs (serve, compare), node_exporter, or nowhere.
type hostSource struct {
	local *engine.Local
	node  *servermetrics.NodeExporter
}

// findHostSource looks the target up among this machine's throwaway servers, and checks a
// node_exporter URL answers (an unreachable one is bad input).
func findHostSource(ctx context.Context, t sqldb.Target, nodeExporter string) (hostSource, error) {
	var hs hostSource
	if nodeExporter != "" {
		n, err := servermetrics.NewNodeExporter(ctx, nodeExporter)
		if err != nil {
			return hs, badInputf("--node-exporter: %v: pass the URL of a running node_exporter's metrics, e.g. http://db-host:9100/metrics", err)
		}
		hs.node = n
		return hs, nil
	}
	if ip := net.ParseIP(t.Host); (ip != nil && ip.IsLoopback()) || t.Host == "localhost" {
		if l, ok := engine.FindLocal(t.Port); ok {
			hs.local = l
		}
	}
	return hs, nil
}

// finishTimeout bounds reading the server's figures after a run.
const finishTimeout = 10 * time.Second

// runMeasured runs the job with the server side watched as compare watches it: the engine's own
// counters over a connection of the monitor's own, and the host figures from hs.
func runMeasured(ctx context.Context, j *job.Job, cfg runner.Config, hs hostSource) (*result.Result, error) {
	conn, err := j.Connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	mon := servermetrics.NewMonitor(conn, nil).WithNodeExporter(hs.node)
	if hs.local != nil {
		disk := ""
		if d, err := cgroup.DiskOf(hs.local.DataDir); err == nil {
			disk = d
		}
		mon = mon.WithCgroup(hs.local.Group, disk).WithDataDir(hs.local.DataDir)
	}
	if err := mon.Start(ctx); err != nil {
		return nil, fmt.Errorf("reading the server's counters: %w", err)
	}
	prevInterval, prevStart := cfg.OnInterval, cfg.OnMeasureStart
	cfg.OnInterval = func(iv *result.Interval) {
		mon.OnInterval(iv)
		if prevInterval != nil {
			prevInterval(iv)
		}
	}
	cfg.OnMeasureStart = func() {
		if cfg.Warmup > 0 {
			_ = mon.MeasureStart(ctx)
		}
		if prevStart != nil {
			prevStart()
		}
	}
	// The baseline is taken again after job.Run's flush, whose writes are not the run's.
	j.OnSettled = func() { _ = mon.MeasureStart(ctx) }
	res, runErr := j.Run(ctx, cfg)
	if res == nil {
		return nil, runErr
	}
	// Read even after Ctrl-C, but bounded: a server that stopped answering must not hold the
	// result back forever, and Ctrl-C must end fairbench within about a second.
	limit := finishTimeout
	if ctx.Err() != nil {
		limit = 300 * time.Millisecond
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), limit)
	defer cancel()
	srv, err := mon.Finish(fctx, res.Transactions)
	if srv != nil {
		res.Server = srv
	}
	if err != nil && runErr == nil {
		runErr = fmt.Errorf("reading the server's figures after the run: %w", err)
	}
	return res, runErr
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
	keys := make([]string, 0, len(s.PerTxn))
	for k := range s.PerTxn {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "    %-37s%.2f per txn\n", k+":", s.PerTxn[k])
	}
}
