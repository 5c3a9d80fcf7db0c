package throwaway

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/engine"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/runner"
	_ "github.com/fairbench/fairbench/internal/workload/all"
	"github.com/fairbench/fairbench/internal/workload/workloadtest"
)

// checkClusterFigures runs oltp_read_write on a small table with threads spread over every node,
// watched as compare watches a step, and checks the result has each node's own figures, their
// sum, and the replication sampled every interval: certification failures included, since
// updates of the same few rows from three nodes conflict.
func checkClusterFigures(t *testing.T, ctx context.Context, srv *Server) {
	t.Helper()
	j := workloadtest.Job(t, srv.Target, "oltp_read_write", map[string]string{"tables": "1", "table-size": "20"}, 7)
	workloadtest.Prepare(t, j, 1)
	mon := srv.Monitor()
	if err := mon.Start(ctx); err != nil {
		t.Fatal(err)
	}
	j.OnSettled = func() { _ = mon.MeasureStart(ctx) }
	res, err := j.Run(ctx, runner.Config{Threads: 6, Duration: 4 * time.Second, ReportInterval: time.Second, MaxTries: 100, OnInterval: mon.OnInterval})
	if err != nil {
		t.Fatal(err)
	}
	s, err := mon.Finish(ctx, res.Transactions)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Nodes) != engine.GaleraNodes || s.Aggregate != "sum of 3 nodes" {
		t.Fatalf("%d nodes, aggregate %q: want %d nodes summed", len(s.Nodes), s.Aggregate, engine.GaleraNodes)
	}
	var cpu float64
	var redo int64
	for _, n := range s.Nodes {
		if n.Error != "" || n.CPUUserS+n.CPUSystemS <= 0 || n.Counters["wal_bytes"] <= 0 || n.MemLoadMB <= 0 {
			t.Errorf("%s (%s): error %q, CPU %.2f+%.2f s, redo %d bytes, memory %.1f MB: want every figure measured",
				n.Name, n.Addr, n.Error, n.CPUUserS, n.CPUSystemS, n.Counters["wal_bytes"], n.MemLoadMB)
		}
		cpu += n.CPUUserS + n.CPUSystemS
		redo += n.Counters["wal_bytes"]
	}
	if d := cpu - (s.CPUUserS + s.CPUSystemS); d > 0.05 || d < -0.05 || s.Counters["wal_bytes"] != redo {
		t.Errorf("headline CPU %.2f s, redo %d: want the nodes' sum %.2f s, %d", s.CPUUserS+s.CPUSystemS, s.Counters["wal_bytes"], cpu, redo)
	}
	checkReplicationSamples(t, res.Intervals, s.Replication)
	repl, _ := json.Marshal(s.Replication)
	last, _ := json.Marshal(res.Intervals[len(res.Intervals)-1].Nodes)
	t.Logf("%.0f TPS, %d retries; replication %s; last interval %s", res.TPS, res.Retries, repl, last)
}

func checkReplicationSamples(t *testing.T, ivs []result.Interval, r *result.Replication) {
	t.Helper()
	if len(ivs) < 3 {
		t.Fatalf("%d intervals: want at least 3", len(ivs))
	}
	for _, iv := range ivs {
		if len(iv.Nodes) != engine.GaleraNodes {
			t.Fatalf("interval at %.1f s has %d nodes: want %d", iv.T, len(iv.Nodes), engine.GaleraNodes)
		}
		for _, n := range iv.Nodes {
			if n.Down || n.ClusterSize == nil || *n.ClusterSize != engine.GaleraNodes || n.RecvQueue == nil ||
				n.CertFailures == nil || n.BFAborts == nil || n.FlowControlPaused == nil || n.CommitLag == nil || n.CPUPct <= 0 {
				t.Errorf("interval at %.1f s, %s: %+v: want every galera figure sampled", iv.T, n.Node, n)
			}
		}
	}
	if r == nil || r.Method != result.ReplicationGalera || r.Samples < len(ivs) || r.CertFailures == nil || r.FlowControlPaused == nil {
		t.Fatalf("replication totals %+v: want galera's, from every interval", r)
	}
	if *r.CertFailures+*r.BFAborts == 0 {
		t.Errorf("no certification failure or brute-force abort: six threads updating 20 rows from three nodes must conflict")
	}
}
