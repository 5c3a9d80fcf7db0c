package report

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/result"
)

func i64p(v int64) *int64          { return &v }
func f64p(v float64) *float64      { return &v }
func roundTo(v, s float64) float64 { return math.Round(v*s) / s }

// clusterFixture is a comparison of single servers and the clusters made of them: mariadb and
// galera (3 nodes, certification failures from conflicting writes), postgres and postgres-ha (a
// leader and two streaming replicas, one of which falls behind, then a failover at 40 s that makes
// node2 the leader).
func clusterFixture(t testing.TB) *Input {
	t.Helper()
	in := &Input{}
	specs := []runSpec{
		{kind: "mariadb", version: mariadbVersion, tps: 900},
		{kind: "galera", version: mariadbVersion, tps: 610},
		{kind: "postgres", version: pgVersion, tps: 1010},
		{kind: "postgres-ha", version: pgVersion, tps: 880},
	}
	for i, s := range specs {
		s.workload, s.threads, s.complete, s.seed = "oltp_read_write", 8, true, int64(i+1)
		r := makeResult(t, s)
		if s.kind == "postgres-ha" { // makeResult gives PostgreSQL's settings to "postgres" alone
			pg := makeResult(t, runSpec{kind: "postgres", version: pgVersion, workload: s.workload, threads: 8, tps: s.tps, complete: true, seed: s.seed})
			r.Server.Profile, r.Server.Settings, r.Server.PerTxn = pg.Server.Profile, pg.Server.Settings, pg.Server.PerTxn
		}
		switch s.kind {
		case "galera":
			makeCluster(r, result.ReplicationGalera, []string{result.RolePrimary, result.RolePrimary, result.RolePrimary})
		case "postgres-ha":
			makeCluster(r, result.ReplicationStreaming, []string{result.RoleLeader, result.RoleReplica, result.RoleReplica})
			r.Routing = "leader" // a mixed workload: on the leader, --read-replicas or not
		}
		in.Results = append(in.Results, r)
	}
	return in
}

// makeCluster gives r per-node figures summing to its headline ones, interval samples per node
// and the replication totals the monitor would have made of them.
func makeCluster(r *result.Result, method string, roles []string) {
	srv := r.Server
	srv.Aggregate = fmt.Sprintf("sum of %d nodes", len(roles))
	share := []float64{0.4, 0.3, 0.3}
	for i, role := range roles {
		n := result.Node{Name: fmt.Sprintf("node%d", i+1), Role: role, Addr: fmt.Sprintf("127.0.0.1:%d", 40001+i), Server: *srv}
		n.Aggregate, n.CPUPct = "", roundTo(srv.CPUPct*share[i], 100)
		n.MemLoadMB = roundTo(srv.MemLoadMB*share[i], 10)
		n.DiskWriteBytes = int64(float64(srv.DiskWriteBytes) * share[i])
		n.PerTxn = map[string]float64{"wal_bytes": 900 + float64(i)*40}
		if method == result.ReplicationGalera {
			n.Counters = map[string]int64{"wsrep_local_cert_failures": int64(120 + 30*i), "wsrep_local_bf_aborts": int64(200 + 10*i), "wsrep_flow_control_paused_ns": int64(i) * 6e8}
		}
		srv.Nodes = append(srv.Nodes, n)
	}
	for k := range r.Intervals {
		iv := &r.Intervals[k]
		for i, role := range roles {
			ni := result.NodeInterval{Node: fmt.Sprintf("node%d", i+1), Role: role, CPUPct: roundTo(iv.ServerCPUPct*share[i], 100)}
			if method == result.ReplicationGalera {
				ni.State, ni.ClusterSize, ni.RecvQueue = "Synced", i64p(3), i64p(int64((k*i)%4))
				ni.CertFailures, ni.BFAborts = i64p(int64(10+i*3+k%3)), i64p(int64(16+i+k%2))
				ni.FlowControlPaused, ni.CommitLag = f64p(roundTo(float64(i)*0.01*float64(k%3), 10000)), i64p(int64((k+i)%3))
			} else {
				failedOver := iv.T > 40
				ni.Role = map[bool]string{true: result.RoleLeader, false: role}[failedOver && i == 1]
				if i == 0 && failedOver {
					ni.Down, ni.Role = true, ""
				}
				if ni.Role == result.RoleReplica {
					ni.ReplayLagS, ni.WriteLagS = f64p(roundTo(0.0004*float64(i*(k+1)), 1e6)), f64p(0.0002)
					ni.FlushLagS, ni.ReplayLagBytes, ni.SyncState = f64p(0.0003), i64p(int64(i*k*8192)), "async"
				}
			}
			iv.Nodes = append(iv.Nodes, ni)
		}
	}
	if method == result.ReplicationGalera {
		srv.Replication = &result.Replication{Method: method, Samples: 13, CertFailures: i64p(390), BFAborts: i64p(633),
			FlowControlPaused: f64p(0.02), RecvQueueMax: i64p(3), CommitLagMax: i64p(2), ClusterSizeMin: i64p(3)}
		return
	}
	srv.Nodes[0].Error = "sampling the server: connection refused"
	srv.Replication = &result.Replication{Method: method, Samples: 13, ReplayLagSMax: f64p(0.0096), ReplayLagSAvg: f64p(0.0031),
		ReplayLagBytesMax: i64p(196608), ReplayLagBytesAvg: f64p(61440), WriteLagSMax: f64p(0.0002), FlushLagSMax: f64p(0.0003)}
}

// The cluster section says what a reader must not have to work out: certification failures
// per 1,000 transactions, replay lag, the headline as a sum, a failover, a node that went away.
func TestClusterSection(t *testing.T) {
	md, err := Markdown(clusterFixture(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"|  | certification failures | — | — | — | 390 |",
		"|  | · per 1,000 txn | — | — | — | 10.66 |",
		"|  | replay lag s, most | — | 0.010 | — | — |",
		"|  | replay lag KB, most | — | 192 | — | — |",
		"postgres-ha: sum of 3 nodes; galera: sum of 3 nodes",
		"| postgres-ha | oltp_read_write | node2 (127.0.0.1:40002) | replica → leader |",
		"did not answer 4 interval samples; sampling the server: connection refused",
		"postgres-ha, oltp_read_write: the clients ran on the leader.",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
