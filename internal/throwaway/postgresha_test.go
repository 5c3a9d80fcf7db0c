package throwaway

import (
	"context"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/engine"
	"github.com/fairbench/fairbench/internal/engine/cluster"
	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/engine/profile"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/testserver"
)

// TestPostgresHAFollowsLeader starts a real postgres-ha cluster the way compare does and checks
// that every connection opened through its host-list target lands on the leader, also after the
// leader's host crashed and Patroni promoted a replica: a client reconnecting reaches the new one.
func TestPostgresHAFollowsLeader(t *testing.T) {
	inst := testserver.Installation(t, discovery.PostgresHA)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	srv, err := Start(ctx, inst, profile.Profile{BufferPoolBytes: 64 << 20, MaxConnections: 50, RedoBytes: 64 << 20}, "")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if srv.Kind != discovery.PostgresHA || len(srv.Target.Addrs) != cluster.PostgresHANodes || !srv.Cluster.Synchronous {
		t.Fatalf("kind %s, target %s, synchronous %v: want synchronous postgres-ha over %d nodes",
			srv.Kind, srv.Target.Redacted(), srv.Cluster.Synchronous, cluster.PostgresHANodes)
	}
	checkClusterFigures(t, ctx, srv)
	// The result records the mode as the leader says it: Patroni names the synchronous standby.
	if sb := srv.Settings["synchronous_standby_names"]; !strings.Contains(sb, "node") {
		t.Errorf("synchronous_standby_names = %q on the leader: want Patroni's synchronous standby named", sb)
	}
	leaderPorts := func() map[string]int {
		t.Helper()
		seen := map[string]int{}
		for range 6 {
			c, err := sqldb.Open(ctx, srv.Target)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := c.Query(ctx, "SELECT current_setting('port'), pg_is_in_recovery()::text")
			c.Close()
			if err != nil {
				t.Fatal(err)
			}
			if rows[0][1] != "false" {
				t.Errorf("a connection through the host list reached a replica (port %s)", rows[0][0])
			}
			seen[rows[0][0]]++
		}
		return seen
	}
	first, err := srv.Cluster.LeaderNode(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if seen := leaderPorts(); len(seen) != 1 || seen[strconv.Itoa(first.Port)] != 6 {
		t.Errorf("6 connections reached ports %v: want the leader's, %d, every time", seen, first.Port)
	}
	if err := first.Fault(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	next, err := srv.Cluster.LeaderNode(ctx)
	for (err != nil || next == first) && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		next, err = srv.Cluster.LeaderNode(ctx)
	}
	if err != nil || next == first {
		t.Fatalf("no new leader a minute after the crash: %v", err)
	}
	if seen := leaderPorts(); len(seen) != 1 || seen[strconv.Itoa(next.Port)] != 6 {
		t.Errorf("after the failover 6 connections reached ports %v: want the new leader's, %d", seen, next.Port)
	}
	if err := srv.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if n := len(engine.Running()); n != 0 {
		t.Errorf("%d servers still running after Close", n)
	}
}
