package servermetrics

import (
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/result"
)

// The headline of a cluster is the sum of its nodes, gauges and the data size excepted; a node
// that could not be read adds nothing and is counted as such.
func TestAggregate(t *testing.T) {
	node := func(cpu, mem float64, disk, redo, queue int64) result.Node {
		return result.Node{Server: result.Server{Local: true, CPUSource: "cgroup v1 x", CPUUserS: cpu, MemLoadMB: mem, DiskWriteBytes: disk,
			DiskWriteOps: disk / 4096, DiskDevice: "254:0 vda", DataSizeBytes: 1000, DataDirBytes: 5000,
			Counters: map[string]int64{KeyWALBytes: redo, KeyRecvQueue: queue}}}
	}
	for _, tc := range []struct {
		name      string
		nodes     []result.Node
		cpu, mem  float64
		redo, q   int64
		aggregate string
	}{
		{"three nodes", []result.Node{node(1.5, 100, 8192, 300, 2), node(1, 90, 4096, 200, 5), node(0.5, 80, 4096, 100, 0)}, 3, 270, 600, 5, "sum of 3 nodes"},
		{"one node gone", []result.Node{node(1.5, 100, 8192, 300, 2), {Name: "node2", Error: "connection refused"}, node(0.5, 80, 4096, 100, 0)},
			2, 180, 400, 2, "sum of 2 nodes (1 of 3 could not be measured)"},
		{"one node killed during the run", []result.Node{node(1.5, 100, 8192, 300, 2), func() result.Node {
			n := node(1, 90, 4096, 0, 0)
			n.Name, n.Error, n.Counters = "node2", "reading SHOW GLOBAL STATUS: connection refused", nil
			return n
		}(), node(0.5, 80, 4096, 100, 0)}, 3, 270, 400, 2, "sum of 3 nodes (node2 measured in part: see its error)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Aggregate(tc.nodes, 100)
			if s.CPUUserS != tc.cpu || s.MemLoadMB != tc.mem || s.Counters[KeyWALBytes] != tc.redo || s.Counters[KeyRecvQueue] != tc.q || s.Aggregate != tc.aggregate {
				t.Errorf("cpu %v mem %v redo %d queue %d %q: want %v %v %d %d %q", s.CPUUserS, s.MemLoadMB, s.Counters[KeyWALBytes], s.Counters[KeyRecvQueue], s.Aggregate,
					tc.cpu, tc.mem, tc.redo, tc.q, tc.aggregate)
			}
			if s.DataSizeBytes != 1000 || s.PerTxn[KeyWALBytes] != float64(tc.redo)/100 || s.HostPerTxn["disk_write_bytes"] != float64(s.DiskWriteBytes)/100 {
				t.Errorf("data size %d, wal per txn %v, disk per txn %v: want one copy's size and the sums per transaction", s.DataSizeBytes, s.PerTxn[KeyWALBytes], s.HostPerTxn)
			}
		})
	}
}

func galeraReading(cert, bf, pausedNS, committed, queue int64) nodeReading {
	return nodeReading{ok: true, role: result.RolePrimary, state: "Synced", galera: map[string]int64{
		"wsrep_local_cert_failures": cert, "wsrep_local_bf_aborts": bf, "wsrep_flow_control_paused_ns": pausedNS,
		"wsrep_last_committed": committed, "wsrep_local_recv_queue": queue, "wsrep_cluster_size": 3}}
}

// Galera's counters become per-interval changes (none for a node with no earlier reading, the
// after-value for one that restarted), commit lag is behind the most advanced node, and the
// totals add up the measured intervals.
func TestReplWatchGalera(t *testing.T) {
	w := newReplWatch(result.ReplicationGalera, []ClusterNode{{Name: "node1"}, {Name: "node2"}, {Name: "node3"}})
	t0 := time.Unix(1000, 0)
	w.prev = []nodeReading{galeraReading(10, 5, 0, 100, 0), {}, galeraReading(50, 0, 0, 100, 0)}
	w.prevAt, w.measuring, w.startAt = t0, true, t0
	nodes := make([]result.NodeInterval, 3)
	now := t0.Add(time.Second)
	w.fill(nodes, []nodeReading{galeraReading(14, 6, 250e6, 140, 3), galeraReading(7, 1, 0, 137, 1), galeraReading(2, 0, 0, 138, 0)}, now)
	want := []struct {
		cert, lag *int64
		paused    *float64
	}{{ptr[int64](4), ptr[int64](0), ptr(0.25)}, {nil, ptr[int64](3), nil}, {ptr[int64](2), ptr[int64](2), ptr(0.0)}}
	for i, n := range nodes {
		if !eqInt(n.CertFailures, want[i].cert) || !eqInt(n.CommitLag, want[i].lag) || !eqFloat(n.FlowControlPaused, want[i].paused) || *n.RecvQueue != []int64{3, 1, 0}[i] {
			t.Errorf("%s: cert %v lag %v paused %v queue %v", n.Node, str(n.CertFailures), str(n.CommitLag), str(n.FlowControlPaused), *n.RecvQueue)
		}
	}
	r := w.tot.result(result.ReplicationGalera, 2*time.Second)
	if *r.CertFailures != 6 || *r.BFAborts != 1 || *r.RecvQueueMax != 3 || *r.CommitLagMax != 3 || *r.FlowControlPaused != 0.125 || r.Samples != 1 {
		t.Errorf("totals %+v", r)
	}
}

// Streaming figures come from the leader's row named after the replica; a replica without one
// is counted as unanswered, and NULL lags of a caught-up replica are zero.
func TestReplWatchStreaming(t *testing.T) {
	w := newReplWatch(result.ReplicationStreaming, []ClusterNode{{Name: "node1"}, {Name: "node2"}, {Name: "node3"}})
	w.prev, w.measuring = make([]nodeReading, 3), true
	leader := nodeReading{ok: true, role: result.RoleLeader, replicas: map[string]streamRow{
		"node2": {syncState: "sync", replayLag: ptr(0.004), writeLag: ptr(0.001), replayBytes: ptr[int64](8192)},
		"other": {replayBytes: ptr[int64](0)},
	}}
	nodes := make([]result.NodeInterval, 3)
	w.fill(nodes, []nodeReading{{ok: true, role: result.RoleReplica}, leader, {ok: true, role: result.RoleReplica}}, time.Now())
	// node1 is a replica now (a failover made node2 the leader); neither replica has a row of its own.
	if nodes[1].Role != result.RoleLeader || nodes[0].ReplayLagS != nil || w.tot.unanswered != 2 {
		t.Errorf("nodes %+v, unanswered %d", nodes, w.tot.unanswered)
	}
	leader.replicas["node3"] = streamRow{replayBytes: ptr[int64](0)}
	w.fill(nodes, []nodeReading{{ok: true, role: result.RoleReplica}, leader, {ok: true, role: result.RoleReplica}}, time.Now())
	if n := nodes[2]; n.ReplayLagS == nil || *n.ReplayLagS != 0 || *n.ReplayLagBytes != 0 {
		t.Errorf("caught-up replica: %+v", n)
	}
	// The leader killed: down, with no role any more, and no lag to read for the replicas.
	nodes = []result.NodeInterval{{Role: result.RoleReplica}, {Role: result.RoleLeader}, {Role: result.RoleReplica}}
	w.fill(nodes, []nodeReading{{ok: true, role: result.RoleReplica}, {}, {ok: true, role: result.RoleReplica}}, time.Now())
	if n := nodes[1]; !n.Down || n.Role != "" || nodes[2].ReplayLagBytes != nil {
		t.Errorf("after the leader's death: %+v", nodes)
	}
}

func eqInt(a, b *int64) bool     { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
func eqFloat(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
func str[T any](p *T) any {
	if p == nil {
		return "nil"
	}
	return *p
}
