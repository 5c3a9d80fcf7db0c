package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"sort"
	"strconv"
	"strings"

	"github.com/fairbench/fairbench/internal/cgroup"
	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/engine"
	"github.com/fairbench/fairbench/internal/job"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/runner"
	"github.com/fairbench/fairbench/internal/servermetrics"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// hostSource says where a run by DSN gets the server's host figures: node_exporter; or, for a
// server on this machine, the cgroup of a throwaway server a fairbench runs (serve, compare), the
// cgroup or process tree of any other server found by its listening socket; else nowhere.
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
			return hs, nil
		}
	}
	if l, ok := engine.FindListening(t.Host, t.Port); ok {
		hs.local = l
	}
	return hs, nil
}

// runMeasured runs the job with the server side watched as compare watches it (job.Measured):
// the engine's own counters over a connection of the monitor's own, and the host figures from hs.
func runMeasured(ctx context.Context, j *job.Job, cfg runner.Config, hs hostSource) (*result.Result, error) {
	if j.PIDs == nil {
		j.PIDs = localProcesses(hs.local)
	}
	mon, closeConns, err := watcherFor(ctx, j, hs)
	if err != nil {
		return nil, err
	}
	defer closeConns()
	return j.Measured(ctx, cfg, mon, j.Run)
}

// localProcesses lists the processes of a server found on this machine, from its cgroup or its
// process tree, so that the machine's load counts them as the server's and never as others' nor,
// where the server is a child of this process (a test's), twice as fairbench's (nil: none found).
func localProcesses(l *engine.Local) func() []int {
	switch {
	case l == nil:
		return nil
	case l.PIDs != nil:
		return l.PIDs
	case l.Group != nil:
		return l.Group.Procs
	}
	return nil
}

// watcherFor watches the target's server as compare does; a host list without --node-exporter
// as a cluster, node by node (watchNodes).
func watcherFor(ctx context.Context, j *job.Job, hs hostSource) (servermetrics.Watcher, func(), error) {
	if len(j.Target.Addrs) > 1 && hs.node == nil {
		return watchNodes(ctx, j.Target)
	}
	conn, err := j.Connect(ctx)
	if err != nil {
		return nil, nil, err
	}
	mon := servermetrics.NewMonitor(conn, nil).WithNodeExporter(hs.node)
	return withLocal(ctx, mon, conn, hs.local), func() { conn.Close() }, nil
}

// withLocal takes the figures of a server on this machine from its cgroup, or its processes, and
// its data directory (l nil: none). A server fairbench did not start names its data directory
// itself, as its own process sees the filesystem (a chroot's, a container's).
func withLocal(ctx context.Context, mon *servermetrics.Monitor, conn sqldb.Conn, l *engine.Local) *servermetrics.Monitor {
	if l == nil {
		return mon
	}
	dataDir := l.DataDir
	if dataDir == "" && l.PID != 0 {
		if d := dialect.Of(conn).DataDirectory(ctx, conn); d != "" {
			dataDir = engine.HostPath(l.PID, d)
		}
	}
	disk := ""
	if d, err := cgroup.DiskOf(dataDir); err == nil {
		disk = d
	}
	if l.Group == nil && l.PIDs != nil {
		mon = mon.WithProcesses(l.PIDs)
	}
	return mon.WithCgroup(l.Group, disk).WithDataDir(dataDir)
}

// watchNodes watches each host of a host list (a cluster's nodes) as a server of its own, over a
// connection to it alone, from its cgroup where it is a throwaway server on this machine, and
// their replication every interval: galera's for the MySQL family, streaming for PostgreSQL.
func watchNodes(ctx context.Context, t sqldb.Target) (servermetrics.Watcher, func(), error) {
	method := dialect.For(t.Kind).Caps().Replication
	var nodes []servermetrics.ClusterNode
	var conns []sqldb.Conn
	closeAll := func() {
		for _, c := range conns {
			c.Close()
		}
	}
	for i, addr := range t.Addrs {
		one := nodeTarget(t, addr)
		c, err := sqldb.Open(ctx, one)
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("node %s of the host list: %w", addr, err)
		}
		conns = append(conns, c)
		mon := servermetrics.NewMonitor(c, nil)
		if hs, err := findHostSource(ctx, one, ""); err == nil {
			mon = withLocal(ctx, mon, c, hs.local)
		}
		nodes = append(nodes, servermetrics.ClusterNode{Name: fmt.Sprintf("node%d", i+1), Target: one, Monitor: mon})
	}
	return servermetrics.NewClusterMonitor(method, nodes), closeAll, nil
}

// nodeTarget is t's host addr alone. target_session_attrs is dropped: a node's own figures are
// read whatever its role.
func nodeTarget(t sqldb.Target, addr string) sqldb.Target {
	host, port, _ := net.SplitHostPort(addr)
	t.Host, t.Addrs = host, nil
	t.Port, _ = strconv.Atoi(port)
	t.Params = maps.Clone(t.Params)
	t.Params.Del("target_session_attrs")
	return t
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
