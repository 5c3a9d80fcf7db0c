package servermetrics

import (
	"fmt"
	"strings"

	"github.com/fairbench/fairbench/internal/result"
)

// Aggregate is a cluster's headline server figures from its nodes': what the cluster cost, so the
// sum of every node's CPU, memory, disk, data directory and engine counters (each node applies
// every write, so its redo and pages written are the cluster's as much as the leader's); gauges
// (receive queue, history length) and the data size, which every node holds a copy of, are the
// largest node's. Memory under load sums each node's own peak, which need not have coincided.
// Sources, settings and the disk device are the first measured node's. Nodes that could not be
// measured add nothing, and the aggregate says how many it sums.
func Aggregate(nodes []result.Node, transactions int64) *result.Server {
	srv := &result.Server{Nodes: nodes}
	summed := 0
	for i := range nodes {
		n := &nodes[i].Server
		if n.CPUSource == "" && n.Counters == nil {
			continue // nothing read from this node
		}
		if summed == 0 {
			srv.Local, srv.Settings = n.Local, n.Settings
			srv.CPUSource, srv.MemorySource, srv.DiskSource, srv.DiskDevice = n.CPUSource, n.MemorySource, n.DiskSource, n.DiskDevice
		}
		summed++
		addHost(srv, n)
		srv.DiskUndercounted = srv.DiskUndercounted || n.DiskUndercounted
		srv.DataSizeBytes = max(srv.DataSizeBytes, n.DataSizeBytes)
		srv.DataDirBytes += n.DataDirBytes
		srv.Counters = addCounters(srv.Counters, n.Counters)
	}
	srv.Aggregate = fmt.Sprintf("sum of %d nodes", summed)
	if summed < len(nodes) {
		srv.Aggregate += fmt.Sprintf(" (%d of %d could not be measured)", len(nodes)-summed, len(nodes))
	}
	var partly []string
	for _, n := range nodes {
		if n.Error != "" && (n.CPUSource != "" || n.Counters != nil) {
			partly = append(partly, n.Name)
		}
	}
	if len(partly) > 0 {
		srv.Aggregate += fmt.Sprintf(" (%s measured in part: see its error)", strings.Join(partly, ", "))
	}
	if srv.Counters != nil {
		srv.PerTxn = PerTransaction(srv.Counters, transactions)
	}
	if srv.Local && transactions > 0 {
		srv.HostPerTxn = hostPerTxn(srv, transactions)
	}
	return srv
}

// addHost adds one node's host figures to the sum.
func addHost(sum, n *result.Server) {
	sum.CPUUserS = round(sum.CPUUserS+n.CPUUserS, 100)
	sum.CPUSystemS = round(sum.CPUSystemS+n.CPUSystemS, 100)
	sum.CPUPct = round(sum.CPUPct+n.CPUPct, 100)
	for _, f := range []struct{ sum, n *float64 }{
		{&sum.MemIdleMB, &n.MemIdleMB}, {&sum.MemLoadMB, &n.MemLoadMB}, {&sum.MemPeakMB, &n.MemPeakMB},
		{&sum.MemAnonIdleMB, &n.MemAnonIdleMB}, {&sum.MemAnonLoadMB, &n.MemAnonLoadMB},
		{&sum.MemCacheIdleMB, &n.MemCacheIdleMB}, {&sum.MemCacheLoadMB, &n.MemCacheLoadMB},
		{&sum.RSSIdleMB, &n.RSSIdleMB}, {&sum.RSSPeakMB, &n.RSSPeakMB}, {&sum.PSSPeakMB, &n.PSSPeakMB},
	} {
		*f.sum = round(*f.sum+*f.n, 10)
	}
	sum.DiskReadBytes += n.DiskReadBytes
	sum.DiskWriteBytes += n.DiskWriteBytes
	sum.DiskReadOps += n.DiskReadOps
	sum.DiskWriteOps += n.DiskWriteOps
	if c := n.DiskCgroup; c != nil {
		if sum.DiskCgroup == nil {
			sum.DiskCgroup = &result.DiskIO{Source: c.Source}
		}
		sum.DiskCgroup.ReadBytes += c.ReadBytes
		sum.DiskCgroup.WriteBytes += c.WriteBytes
		sum.DiskCgroup.ReadOps += c.ReadOps
		sum.DiskCgroup.WriteOps += c.WriteOps
	}
}

// addCounters adds one node's counter deltas to the sum; gauges keep the largest.
func addCounters(sum, n map[string]int64) map[string]int64 {
	if n == nil {
		return sum
	}
	if sum == nil {
		sum = map[string]int64{}
	}
	for k, v := range n {
		if gauges[k] {
			sum[k] = max(sum[k], v)
		} else {
			sum[k] += v
		}
	}
	return sum
}
