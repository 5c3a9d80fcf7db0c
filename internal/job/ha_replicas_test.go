package job_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/engine/cluster"
	"github.com/fairbench/fairbench/internal/runner"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload/workloadtest"
)

// TestPostgresHAReadReplicas runs oltp_point_select on a real postgres-ha cluster twice: through
// the leader target, then with ReadTarget set as compare --read-replicas sets it
// (prefer-standby). Each node's own committed transactions (pg_stat_database.xact_commit) say
// who served the reads: the leader alone the first time, the replicas the second.
func TestPostgresHAReadReplicas(t *testing.T) {
	c, tg := startHA(t, cluster.HAOptions{})
	j := newJob(t, tg, "oltp_point_select", map[string]string{"tables": "1", "table-size": "2000"})
	if !j.Workload.Traits().ReadOnly {
		t.Fatal("oltp_point_select does not say it is read-only")
	}
	workloadtest.Prepare(t, j, 2)
	ctx := context.Background()
	// run measures 2 s and returns how much each node's xact_commit rose, and the leader's name.
	run := func(label string) (map[string]int64, string) {
		t.Helper()
		before, _ := nodeCommits(t, ctx, c)
		res, err := j.Run(ctx, runner.Config{Threads: 6, Duration: 2 * time.Second, MaxTries: 10})
		if err != nil || !res.Complete {
			t.Fatalf("%s: run: %v", label, err)
		}
		time.Sleep(time.Second) // closed backends' statistics reach pg_stat_database
		after, leader := nodeCommits(t, ctx, c)
		delta := map[string]int64{}
		for name, n := range after {
			delta[name] = n - before[name]
		}
		t.Logf("%s: %d transactions (%.0f TPS); xact_commit rose by %v (leader %s)", label, res.Transactions, res.TPS, delta, leader)
		return delta, leader
	}
	delta, leader := run("without ReadTarget")
	for name, n := range delta {
		if name == leader && n < 1000 || name != leader && n > delta[leader]/20 {
			t.Errorf("without ReadTarget the leader should serve the reads: xact_commit rose by %v (leader %s)", delta, leader)
			break
		}
	}
	rt := tg.WithSessionAttrs("prefer-standby")
	j.ReadTarget = &rt
	delta, leader = run("with ReadTarget prefer-standby")
	for name, n := range delta {
		if name == leader && n > 200 || name != leader && n < 500 {
			t.Errorf("with ReadTarget the replicas, each of them, should serve the reads: xact_commit rose by %v (leader %s)", delta, leader)
			break
		}
	}
}

// nodeCommits reads xact_commit of the fairbench database on each node, by node name, and
// names the leader.
func nodeCommits(t *testing.T, ctx context.Context, c *cluster.Cluster) (map[string]int64, string) {
	t.Helper()
	out := map[string]int64{}
	leader := ""
	nodes := c.NodeInfos(ctx)
	if len(nodes) != cluster.PostgresHANodes {
		t.Fatalf("%d nodes known: want %d", len(nodes), cluster.PostgresHANodes)
	}
	for _, n := range nodes {
		if n.Role == "leader" {
			leader = n.Name
		}
		out[n.Name] = nodeCommit(t, ctx, n.DSN)
	}
	return out, leader
}

func nodeCommit(t *testing.T, ctx context.Context, dsn string) int64 {
	t.Helper()
	tg, err := sqldb.ParseTarget(dsn)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := sqldb.Open(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rows, err := conn.Query(ctx, "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()")
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseInt(rows[0][0], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
