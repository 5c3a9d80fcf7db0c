package throwaway

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/engine/cluster"
	"github.com/fairbench/fairbench/internal/engine/discovery"
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
	// Galera's 20 hot rows make the certification conflicts its samples must show. PostgreSQL gets
	// 2,000: on 20 rows its deadlocks wait deadlock_timeout (1 s) to be found, and a client caught
	// in one at the end outlasts a 4 s run's 1 s grace (failed CI once).
	rows := "20"
	if srv.Kind != discovery.Galera {
		rows = "2000"
	}
	j := workloadtest.Job(t, srv.Target, "oltp_read_write", map[string]string{"tables": "1", "table-size": rows}, 7)
	workloadtest.Prepare(t, j, 1)
	mon := srv.Monitor()
	if err := mon.Start(ctx); err != nil {
		t.Fatal(err)
	}
	j.OnSettled = func() { _ = mon.MeasureStart(ctx) }
	res, err := j.Run(ctx, runner.Config{Threads: 6, Duration: 4 * time.Second, ReportInterval: time.Second, MaxTries: 100, Observers: []runner.Observer{runner.Hooks{OnInterval: mon.OnInterval}}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := mon.Finish(ctx, res.Transactions)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Nodes) != 3 || s.Aggregate != "sum of 3 nodes" {
		t.Fatalf("%d nodes, aggregate %q: want 3 nodes summed", len(s.Nodes), s.Aggregate)
	}
	var cpu float64
	var redo int64
	for _, n := range s.Nodes {
		// A PostgreSQL replica replays the leader's WAL and writes none of its own.
		writes := n.Role != result.RoleReplica
		if n.Error != "" || n.CPUUserS+n.CPUSystemS <= 0 || (writes && n.Counters["wal_bytes"] <= 0) || n.MemLoadMB <= 0 {
			t.Errorf("%s (%s): error %q, CPU %.2f+%.2f s, redo %d bytes, memory %.1f MB: want every figure measured",
				n.Name, n.Addr, n.Error, n.CPUUserS, n.CPUSystemS, n.Counters["wal_bytes"], n.MemLoadMB)
		}
		cpu += n.CPUUserS + n.CPUSystemS
		redo += n.Counters["wal_bytes"]
	}
	if d := cpu - (s.CPUUserS + s.CPUSystemS); d > 0.05 || d < -0.05 || s.Counters["wal_bytes"] != redo {
		t.Errorf("headline CPU %.2f s, redo %d: want the nodes' sum %.2f s, %d", s.CPUUserS+s.CPUSystemS, s.Counters["wal_bytes"], cpu, redo)
	}
	if srv.Kind == discovery.Galera {
		checkGaleraSamples(t, res.Intervals, s.Replication)
	} else {
		checkStreamingSamples(t, res.Intervals, s.Replication)
	}
	repl, _ := json.Marshal(s.Replication)
	last, _ := json.Marshal(res.Intervals[len(res.Intervals)-1].Nodes)
	t.Logf("%.0f TPS, %d retries; replication %s; last interval %s", res.TPS, res.Retries, repl, last)
}

// eachNodeSample calls f for every node of every interval, which must be three or more, each
// with a sample of every node; f gets whether the node's previous sample was down, after which
// its counters have no change to show. A node may be marked down where its sample took over 2 s
// on a machine starved of CPU; more than a third of the samples down fails the test.
func eachNodeSample(t *testing.T, ivs []result.Interval, f func(iv result.Interval, n result.NodeInterval, prevDown bool)) {
	t.Helper()
	if len(ivs) < 3 {
		t.Fatalf("%d intervals: want at least 3", len(ivs))
	}
	down, prev := 0, map[string]bool{}
	for _, iv := range ivs {
		if len(iv.Nodes) != 3 {
			t.Fatalf("interval at %.1f s has %d nodes: want 3", iv.T, len(iv.Nodes))
		}
		for _, n := range iv.Nodes {
			if n.Down {
				down++
			} else {
				f(iv, n, prev[n.Node])
			}
			prev[n.Node] = n.Down
		}
	}
	if samples := len(ivs) * 3; down*3 > samples {
		t.Errorf("%d of %d node samples down: the nodes did not answer", down, samples)
	}
}

func checkGaleraSamples(t *testing.T, ivs []result.Interval, r *result.Replication) {
	t.Helper()
	eachNodeSample(t, ivs, func(iv result.Interval, n result.NodeInterval, prevDown bool) {
		counted := prevDown || (n.CertFailures != nil && n.BFAborts != nil && n.FlowControlPaused != nil)
		if n.ClusterSize == nil || *n.ClusterSize != cluster.GaleraNodes || n.RecvQueue == nil || !counted || n.CommitLag == nil || n.CPUPct <= 0 {
			t.Errorf("interval at %.1f s, %s: %+v: want every galera figure sampled", iv.T, n.Node, n)
		}
	})
	if r == nil || r.Method != result.ReplicationGalera || r.Samples < len(ivs) || r.CertFailures == nil || r.FlowControlPaused == nil {
		t.Fatalf("replication totals %+v: want galera's, from every interval", r)
	}
	if *r.CertFailures+*r.BFAborts == 0 {
		t.Errorf("no certification failure or brute-force abort: six threads updating 20 rows from three nodes must conflict")
	}
}

// checkStreamingSamples wants a leader and replicas in every interval, each replica with its lag
// from the leader's pg_stat_replication.
func checkStreamingSamples(t *testing.T, ivs []result.Interval, r *result.Replication) {
	t.Helper()
	eachNodeSample(t, ivs, func(iv result.Interval, n result.NodeInterval, _ bool) {
		switch {
		case n.CPUPct <= 0:
			t.Errorf("interval at %.1f s, %s: CPU %.2f%%: want it measured", iv.T, n.Node, n.CPUPct)
		// PostgreSQL leaves the lag in seconds NULL until the replica has answered for new WAL,
		// so an interval may lack it; the bytes it has yet to replay are always known.
		case n.Role == result.RoleReplica && (n.ReplayLagBytes == nil || n.SyncState == ""):
			t.Errorf("interval at %.1f s, replica %s: %+v: want its lag in bytes", iv.T, n.Node, n)
		case n.Role != result.RoleReplica && n.Role != result.RoleLeader:
			t.Errorf("interval at %.1f s, %s: role %q", iv.T, n.Node, n.Role)
		}
	})
	if r == nil || r.Method != result.ReplicationStreaming || r.Samples < len(ivs) || r.ReplayLagBytesMax == nil || r.ReplayLagSMax == nil || r.ReplicasUnanswered != 0 {
		t.Fatalf("replication totals %+v: want streaming's, from every interval", r)
	}
}
