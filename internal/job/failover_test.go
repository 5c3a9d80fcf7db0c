package job_test

import (
	"context"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/engine"
	"github.com/fairbench/fairbench/internal/engine/cluster"
	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/engine/profile"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/runner"
	"github.com/fairbench/fairbench/internal/runspec"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/testserver"
	"github.com/fairbench/fairbench/internal/workload/workloadtest"
)

// haTiming is Patroni's timing in these tests: a crashed leader's lock expires after 8 s.
var haTiming = engine.PatroniTiming{TTL: 8, LoopWait: 1, RetryTimeout: 3}

// startHA starts a real postgres-ha cluster (etcd, three Patroni nodes) for the test, stopped
// and removed when it ends; it skips where patroni or etcd is not installed, unless required.
func startHA(t *testing.T, opts cluster.HAOptions) (*cluster.Cluster, sqldb.Target) {
	t.Helper()
	inst := testserver.Installation(t, discovery.PostgresHA)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	opts.Timing = haTiming
	c, err := cluster.StartPostgresHA(ctx, inst, profile.Profile{BufferPoolBytes: 64 << 20, MaxConnections: 50, RedoBytes: 64 << 20}, "", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("stop postgres-ha: %v", err)
		}
		// This cluster's nodes, not every server: the package's other tests share single servers
		// that stay up until the package ends.
		running := engine.Running()
		for _, node := range c.Nodes {
			if slices.Contains(running, node) {
				t.Errorf("node on port %d still running after Stop", node.Port)
			}
		}
	})
	tg, err := sqldb.ParseTarget(c.DSN)
	if err != nil {
		t.Fatal(err)
	}
	return c, tg
}

// runWithFaults runs payments on the cluster for 25 s with 4 clients, the job's faults (as
// --fault gives them) fired by its schedule, and custom, when set, called 5 s into the measured
// window; it returns the result.
func runWithFaults(t *testing.T, c *cluster.Cluster, tg sqldb.Target, faults string, check bool, custom func()) *result.Result {
	t.Helper()
	j := newJob(t, tg, "payments", map[string]string{"accounts": "2000", "banks": "5"})
	j.CheckAfterRun = check
	j.Cluster = c.PatroniFaults()
	if faults != "" {
		var err error
		if j.Faults, err = runspec.ParseFaults("--fault", []string{faults}); err != nil {
			t.Fatal(err)
		}
	}
	workloadtest.Prepare(t, j, 2)
	start := make(chan time.Time, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t0 := <-start
		if custom != nil {
			time.Sleep(5 * time.Second)
			custom()
			t.Logf("custom fault at %.1f s", time.Since(t0).Seconds())
		}
	}()
	res, err := j.Run(context.Background(), runner.Config{Threads: 4, Duration: 25 * time.Second, MaxTries: 10, ReportInterval: time.Second,
		Observers: []runner.Observer{runner.Hooks{OnMeasureStart: func() { start <- time.Now() }}}})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	<-done
	if res.Availability == nil || res.Availability.Acks == nil {
		t.Fatalf("the run recorded no availability or acknowledged transactions: %+v", res.Availability)
	}
	a := res.Availability
	t.Logf("faults %+v; %d transactions, downtime %.1f s (longest %.1f s), %d reconnections, %d acknowledged, %d lost, %d in doubt (%d committed)",
		a.Faults, res.Transactions, a.DowntimeS, a.LongestOutageS, a.Reconnections, a.Acks.Acknowledged, a.Acks.Lost, a.Acks.InDoubt, a.Acks.InDoubtFound)
	return res
}

// committedAfter says whether the run committed transactions in an interval ending after t.
func committedAfter(res *result.Result, t float64) bool {
	for _, iv := range res.Intervals {
		if iv.T > t+1 && iv.TPS > 0 {
			return true
		}
	}
	return false
}

// TestPostgresHAKillLeaderLosesNothing runs payments with --fault kill-leader@5s on a synchronous
// postgres-ha cluster (the leader's host crashing: Patroni and postgres SIGKILLed): a replica is promoted,
// the clients reconnect to it through the host list and the run goes on, the downtime is
// reported, every transfer the clients saw committed is on the new leader, and money is conserved.
func TestPostgresHAKillLeaderLosesNothing(t *testing.T) {
	c, tg := startHA(t, cluster.HAOptions{})
	first, err := c.LeaderNode(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	res := runWithFaults(t, c, tg, "kill-leader@5s", true, nil)
	a := res.Availability
	if len(a.Faults) != 1 || a.Faults[0].Error != "" || a.Faults[0].Node != c.NodeName(slices.Index(c.Nodes, first)) {
		t.Fatalf("faults %+v: want kill-leader fired on %s", a.Faults, c.NodeName(slices.Index(c.Nodes, first)))
	}
	at := a.Faults[0].AtS
	if !res.Complete {
		t.Errorf("run incomplete: %s", res.Error)
	}
	if a.Acks.Acknowledged == 0 || a.Acks.Lost != 0 || a.Acks.NotChecked != "" {
		t.Errorf("acknowledged %d, lost %d (%s): want every acknowledged transfer found in synchronous mode", a.Acks.Acknowledged, a.Acks.Lost, a.Acks.NotChecked)
	}
	if a.DowntimeS < 1 || a.LongestOutageS > float64(3*haTiming.TTL) {
		t.Errorf("downtime %.1f s, longest outage %.1f s: want the failover's gap, within a few TTLs (%d s)", a.DowntimeS, a.LongestOutageS, haTiming.TTL)
	}
	if a.Reconnections == 0 {
		t.Error("no reconnection counted after the leader died")
	}
	if !committedAfter(res, at+a.LongestOutageS) {
		t.Errorf("nothing committed after the failover: %+v", res.Intervals)
	}
	if next, err := c.LeaderNode(context.Background()); err != nil || next == first {
		t.Errorf("leader after the run: %v (%v), want a new one", next, err)
	}
}

// TestPostgresHAAsyncFailoverCountsLoss loses acknowledged transactions on purpose and checks
// that they are counted: in asynchronous mode the leader acknowledges commits no replica has.
// Its WAL senders are frozen (SIGSTOP), so WAL written after that is never sent (the replicas'
// received positions stay behind the leader's, checked), then the leader's host crashes and
// Patroni promotes a replica that never had those transactions.
func TestPostgresHAAsyncFailoverCountsLoss(t *testing.T) {
	c, tg := startHA(t, cluster.HAOptions{Async: true, MaxLagOnFailover: 64 << 20})
	if c.Synchronous || !strings.Contains(c.LossSetting(), "synchronous_mode=off") {
		t.Fatalf("synchronous %v, loss setting %q: want an asynchronous cluster that says so", c.Synchronous, c.LossSetting())
	}
	ctx := context.Background()
	leader, err := c.LeaderNode(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res := runWithFaults(t, c, tg, "", false, func() {
		freezeWALSenders(t, leader)
		time.Sleep(time.Second) // acknowledged commits pile up that no replica receives
		sent := walBehind(t, c, leader)
		t.Logf("leader at %s when killed; replicas received up to %v", sent[0], sent[1:])
		if err := leader.Fault(syscall.SIGKILL); err != nil {
			t.Error(err)
		}
	})
	a := res.Availability.Acks
	if a.Lost == 0 || a.Lost > a.Acknowledged || a.NotChecked != "" {
		t.Fatalf("acknowledged %d, lost %d (%s): want the transfers committed after the WAL senders froze counted lost", a.Acknowledged, a.Lost, a.NotChecked)
	}
	if a.Setting != c.LossSetting() {
		t.Errorf("the result says the loss was allowed by %q, want %q", a.Setting, c.LossSetting())
	}
	next, err := c.LeaderNode(ctx)
	if err != nil || next == leader {
		t.Fatalf("no new leader after the run: %v", err)
	}
	// The lost ids really are missing on the new leader: the count is not the check's invention.
	conn, err := next.PgConnect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var present int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM transfers WHERE id = ANY($1)", a.LostExamples).Scan(&present); err != nil {
		t.Fatal(err)
	}
	if present != 0 || len(a.LostExamples) == 0 {
		t.Errorf("%d of the %d lost examples are on the new leader", present, len(a.LostExamples))
	}
	t.Logf("lost %d of %d acknowledged transfers; allowed by %s", a.Lost, a.Acknowledged, a.Setting)
}

// freezeWALSenders stops the leader's WAL sender processes: the WAL they have not sent yet stays
// on the leader only.
func freezeWALSenders(t *testing.T, leader *engine.Server) {
	t.Helper()
	ctx := context.Background()
	conn, err := leader.PgConnect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SELECT pid FROM pg_stat_replication")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for rows.Next() {
		var pid int
		if err := rows.Scan(&pid); err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
	}
	if len(pids) != cluster.PostgresHANodes-1 {
		t.Fatalf("leader has %d WAL senders, want %d", len(pids), cluster.PostgresHANodes-1)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
	}
}

// walBehind returns the leader's WAL position and each replica's last received one, and fails
// the test unless every replica is behind: the proof that WAL the leader wrote was not received.
func walBehind(t *testing.T, c *cluster.Cluster, leader *engine.Server) []string {
	t.Helper()
	ctx := context.Background()
	lsn := func(s *engine.Server, q string) string {
		conn, err := s.PgConnect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var v string
		if err := conn.QueryRow(ctx, q).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	out := []string{lsn(leader, "SELECT pg_current_wal_lsn()::text")}
	for _, s := range c.Nodes {
		if s == leader {
			continue
		}
		got := lsn(s, "SELECT pg_last_wal_receive_lsn()::text")
		conn, err := s.PgConnect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var behind bool
		err = conn.QueryRow(ctx, "SELECT $1::pg_lsn < $2::pg_lsn", got, out[0]).Scan(&behind)
		conn.Close(ctx)
		if err != nil || !behind {
			t.Fatalf("replica on port %d received up to %s, the leader is at %s: the WAL was not held back (%v)", s.Port, got, out[0], err)
		}
		out = append(out, got)
	}
	return out
}
