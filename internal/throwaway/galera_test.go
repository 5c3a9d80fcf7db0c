package throwaway

import (
	"context"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/engine"
	"github.com/fairbench/fairbench/internal/engine/cluster"
	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/engine/profile"
	"github.com/fairbench/fairbench/internal/servermetrics"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/testserver"
)

// TestGaleraSpreadAndFailover starts a real galera cluster the way compare does, checks that
// connections opened through its host-list target spread over all nodes, and that with one node
// killed every new connection still lands on a survivor.
func TestGaleraSpreadAndFailover(t *testing.T) {
	inst := testserver.Installation(t, discovery.Galera)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv, err := Start(ctx, inst, profile.Profile{BufferPoolBytes: 128 << 20, MaxConnections: 50, RedoBytes: 64 << 20}, "")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if srv.Kind != discovery.Galera || len(srv.Target.Addrs) != cluster.GaleraNodes {
		t.Fatalf("kind %s, target %s: want galera over %d nodes", srv.Kind, srv.Target.Redacted(), cluster.GaleraNodes)
	}

	// The replication counters a report shows next to the single server's.
	ctrs, err := servermetrics.Counters(ctx, srv.Conn)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"wsrep_local_cert_failures", "wsrep_flow_control_paused_ns", "wsrep_replicated_bytes", servermetrics.KeyRecvQueue} {
		if _, ok := ctrs[k]; !ok {
			t.Errorf("counters lack %s: %v", k, ctrs)
		}
	}

	checkClusterFigures(t, ctx, srv)

	ports := func(n int) map[string]int {
		t.Helper()
		seen := map[string]int{}
		for range n {
			c, err := sqldb.Open(ctx, srv.Target)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := c.Query(ctx, "SELECT @@port")
			c.Close()
			if err != nil {
				t.Fatal(err)
			}
			seen[rows[0][0]]++
		}
		return seen
	}
	if seen := ports(6); len(seen) != cluster.GaleraNodes {
		t.Errorf("6 connections reached ports %v: want all %d nodes, two each", seen, cluster.GaleraNodes)
	}

	killed := srv.Cluster.Nodes[1]
	if err := killed.Fault(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for killed.Alive() {
		time.Sleep(50 * time.Millisecond)
	}
	seen := ports(6)
	if seen[strconv.Itoa(killed.Port)] != 0 || len(seen) != cluster.GaleraNodes-1 {
		t.Errorf("after killing the node on port %d, connections reached %v: want the two survivors only", killed.Port, seen)
	}
	if err := srv.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if n := len(engine.Running()); n != 0 {
		t.Errorf("%d servers still running after Close", n)
	}
}
