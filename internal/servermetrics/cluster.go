package servermetrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// Watcher is what a run needs of its server's monitor: a single server's (Monitor) or a
// cluster's (ClusterMonitor), used alike: Start, MeasureStart when the measured window opens,
// OnInterval on the runner's reporter goroutine, Finish once the run's connections are closed.
type Watcher interface {
	Start(ctx context.Context) error
	MeasureStart(ctx context.Context) error
	OnInterval(iv *result.Interval)
	Finish(ctx context.Context, transactions int64) (*result.Server, error)
}

// ClusterNode is one node a ClusterMonitor watches: all an engine has to say about its nodes is
// their names, roles and targets; Monitor is the node watched as a single server (its cgroup,
// its counters over a connection to it alone).
type ClusterNode struct {
	Name, Role string
	Target     sqldb.Target // the node alone (no host list)
	Monitor    *Monitor
}

// ClusterMonitor watches a cluster: every node as a single server, and their replication, sampled
// every interval over connections of its own (the node Monitors' connections are used from the
// goroutine that starts and finishes the run; samples are taken on the runner's reporter).
// A node that stops answering (killed by a fault) is marked in the intervals and the result; the
// others are still measured.
type ClusterMonitor struct {
	nodes []ClusterNode
	repl  *replWatch
}

// NewClusterMonitor watches nodes replicating by method (result.ReplicationGalera or
// result.ReplicationStreaming).
func NewClusterMonitor(method string, nodes []ClusterNode) *ClusterMonitor {
	return &ClusterMonitor{nodes: nodes, repl: newReplWatch(method, nodes)}
}

// Start starts every node's monitor and takes the replication baseline. Every node must answer:
// a cluster that is not whole before the run is no cluster to measure.
func (c *ClusterMonitor) Start(ctx context.Context) error {
	for _, n := range c.nodes {
		if err := n.Monitor.Start(ctx); err != nil {
			return fmt.Errorf("%s: %w", n.Name, err)
		}
	}
	return c.repl.start(ctx)
}

// MeasureStart moves every node's baseline, and the replication totals', to now. A node that
// does not answer keeps its earlier baseline. The replication reading is bounded as each
// interval's is: it holds the lock the intervals' readings wait on.
func (c *ClusterMonitor) MeasureStart(ctx context.Context) error {
	errs := c.eachNode(func(i int, n ClusterNode) error { return n.Monitor.MeasureStart(ctx) })
	rctx, cancel := context.WithTimeout(ctx, replSampleTimeout)
	defer cancel()
	c.repl.measureStart(rctx)
	return errors.Join(errs...)
}

// eachNode runs f for every node at once and returns the errors, each naming its node.
func (c *ClusterMonitor) eachNode(f func(i int, n ClusterNode) error) []error {
	errs := make([]error, len(c.nodes))
	var wg sync.WaitGroup
	for i, n := range c.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(i, n); err != nil {
				errs[i] = fmt.Errorf("%s: %w", n.Name, err)
			}
		}()
	}
	wg.Wait()
	return errs
}

// OnInterval fills the interval's per-node figures and their sum in its server_* fields.
func (c *ClusterMonitor) OnInterval(iv *result.Interval) {
	nodes := make([]result.NodeInterval, len(c.nodes))
	for i, n := range c.nodes {
		var one result.Interval
		n.Monitor.OnInterval(&one)
		nodes[i] = result.NodeInterval{Node: n.Name, Role: n.Role, CPUPct: one.ServerCPUPct, MemMB: one.ServerMemMB,
			DiskReadBytes: one.ServerDiskReadBytes, DiskWriteBytes: one.ServerDiskWriteBytes,
			DiskReadOps: one.ServerDiskReadOps, DiskWriteOps: one.ServerDiskWriteOps}
		iv.ServerCPUPct = round(iv.ServerCPUPct+one.ServerCPUPct, 100)
		iv.ServerMemMB = round(iv.ServerMemMB+one.ServerMemMB, 10)
		iv.ServerDiskReadBytes += one.ServerDiskReadBytes
		iv.ServerDiskWriteBytes += one.ServerDiskWriteBytes
		iv.ServerDiskReadOps += one.ServerDiskReadOps
		iv.ServerDiskWriteOps += one.ServerDiskWriteOps
	}
	ctx, cancel := context.WithTimeout(context.Background(), replSampleTimeout)
	defer cancel()
	c.repl.interval(ctx, nodes)
	iv.Nodes = nodes
}

// Finish finishes every node's monitor and sums them up. A node that cannot be read is kept with
// its error; Finish fails only when no node could be read at all.
func (c *ClusterMonitor) Finish(ctx context.Context, transactions int64) (*result.Server, error) {
	nodes := make([]result.Node, len(c.nodes))
	errs := c.eachNode(func(i int, n ClusterNode) error {
		srv, err := n.Monitor.Finish(ctx, transactions)
		nodes[i] = result.Node{Name: n.Name, Role: n.Role, Addr: net.JoinHostPort(n.Target.Host, strconv.Itoa(n.Target.Port))}
		if srv != nil {
			nodes[i].Server = *srv
		}
		if err != nil {
			// One line: errors.Join puts each of a dead node's failed reads on its own.
			nodes[i].Error = strings.ReplaceAll(err.Error(), "\n", "; ")
		}
		return err
	})
	rctx, cancel := context.WithTimeout(ctx, replSampleTimeout)
	defer cancel()
	repl := c.repl.finish(rctx)
	srv := Aggregate(nodes, transactions)
	srv.Replication = repl
	if len(nodes) > 0 && countErrs(errs) == len(nodes) {
		return srv, errors.Join(errs...)
	}
	return srv, nil
}

func countErrs(errs []error) int {
	n := 0
	for _, e := range errs {
		if e != nil {
			n++
		}
	}
	return n
}

// replSampleTimeout bounds one replication sample: a frozen node (SIGSTOP) must not hold the
// interval's reporter, which would stretch the interval it cuts next.
const replSampleTimeout = 2 * time.Second
