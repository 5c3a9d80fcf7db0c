// Package attach watches a server fairbench did not start, given by its DSN: its host figures
// from node_exporter, or, for a server on this machine, from the cgroup of a throwaway server
// another fairbench runs, or the cgroup or process tree of any other server found by its
// listening socket; else from nowhere, said so in the results. run, capacity and compare's
// --targets measure such a server through it, so each watches it the same way.
package attach

import (
	"context"
	"fmt"
	"maps"
	"net"
	"strconv"

	"github.com/fairbench/fairbench/internal/cgroup"
	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/engine"
	"github.com/fairbench/fairbench/internal/servermetrics"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// Host is where a server's host figures come from: a local server's processes, or a
// node_exporter; both nil when neither is known.
type Host struct {
	Local *engine.Local
	Node  *servermetrics.NodeExporter
}

// BadNodeExporter is a node_exporter URL that does not answer: the user's to fix.
type BadNodeExporter struct{ Err error }

func (e *BadNodeExporter) Error() string {
	return fmt.Sprintf("--node-exporter: %v: pass the URL of a running node_exporter's metrics, e.g. http://db-host:9100/metrics", e.Err)
}

// FindHost looks the target up among this machine's servers, or checks that a node_exporter URL
// answers (an unreachable one is a *BadNodeExporter).
func FindHost(ctx context.Context, t sqldb.Target, nodeExporter string) (Host, error) {
	var h Host
	if nodeExporter != "" {
		n, err := servermetrics.NewNodeExporter(ctx, nodeExporter)
		if err != nil {
			return h, &BadNodeExporter{Err: err}
		}
		h.Node = n
		return h, nil
	}
	if t.OnLoopback() {
		if l, ok := engine.FindLocal(t.Port); ok {
			h.Local = l
			return h, nil
		}
	}
	if l, ok := engine.FindListening(t.Host, t.Port); ok {
		h.Local = l
	}
	return h, nil
}

// Processes lists the processes of a server found on this machine, from its cgroup or its
// process tree, so that the machine's load counts them as the server's and never as others' nor,
// where the server is a child of this process (a test's), twice as fairbench's (nil: none found).
func (h Host) Processes() func() []int {
	switch l := h.Local; {
	case l == nil:
		return nil
	case l.PIDs != nil:
		return l.PIDs
	case l.Group != nil:
		return l.Group.Procs
	}
	return nil
}

// DataDir is a local server's data directory as this process sees it ("" when unknown).
func (h Host) DataDir() string {
	if h.Local == nil {
		return ""
	}
	return h.Local.DataDir
}

// Watch watches the target's server as compare watches its own: the engine's counters over a
// connection of the monitor's own (from connect), the host figures from h; a host list without a
// node_exporter as a cluster, node by node. The returned func closes the monitor's connections.
func Watch(ctx context.Context, t sqldb.Target, connect func(context.Context) (sqldb.Conn, error), h Host) (servermetrics.Watcher, func(), error) {
	if len(t.Addrs) > 1 && h.Node == nil {
		return watchNodes(ctx, t)
	}
	conn, err := connect(ctx)
	if err != nil {
		return nil, nil, err
	}
	// A server fairbench did not start may be another product of the protocol: what it cannot
	// give is recorded as not available, and the run goes on.
	mon := servermetrics.NewMonitor(conn, nil).WithNodeExporter(h.Node).Tolerant()
	return withLocal(ctx, mon, conn, h.Local), func() { conn.Close() }, nil
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
		one := NodeTarget(t, addr)
		c, err := sqldb.Open(ctx, one)
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("node %s of the host list: %w", addr, err)
		}
		conns = append(conns, c)
		mon := servermetrics.NewMonitor(c, nil)
		if h, err := FindHost(ctx, one, ""); err == nil {
			mon = withLocal(ctx, mon, c, h.Local)
		}
		nodes = append(nodes, servermetrics.ClusterNode{Name: fmt.Sprintf("node%d", i+1), Target: one, Monitor: mon})
	}
	return servermetrics.NewClusterMonitor(method, nodes), closeAll, nil
}

// NodeTarget is t's host addr alone. target_session_attrs is dropped: a node's own figures are
// read whatever its role.
func NodeTarget(t sqldb.Target, addr string) sqldb.Target {
	host, port, _ := net.SplitHostPort(addr)
	t.Host, t.Addrs = host, nil
	t.Port, _ = strconv.Atoi(port)
	t.Params = maps.Clone(t.Params)
	t.Params.Del("target_session_attrs")
	return t
}
