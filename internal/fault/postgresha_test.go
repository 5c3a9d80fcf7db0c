package fault_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/engine/profile"
	"github.com/fairbench/fairbench/internal/runner"
	"github.com/fairbench/fairbench/internal/runspec"
	"github.com/fairbench/fairbench/internal/testserver"
	"github.com/fairbench/fairbench/internal/throwaway"
	"github.com/fairbench/fairbench/internal/workload/workloadtest"
)

// TestPaymentsThroughPostgresHAFaults runs payments on a real postgres-ha cluster (synchronous
// mode, fairbench's default Patroni timing) through the faults --fault takes, each in its own
// measured window: the leader frozen for 2 s (shorter than the TTL: no failover, a stall), a
// replica cut off for 2 s (nftables; the synchronous one's partition stalls commits), and the
// leader's host crashing (kill-leader), after which Patroni promotes the synchronous standby and
// the clients reconnect to it. Each run goes on, no acknowledged transfer is lost and money is
// conserved; afterwards nothing of the cluster is left.
func TestPaymentsThroughPostgresHAFaults(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	inst := testserver.Installation(t, discovery.PostgresHA)
	srv, err := throwaway.Start(ctx, inst, profile.Profile{BufferPoolBytes: 64 << 20, MaxConnections: 50, RedoBytes: 64 << 20}, "")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cl := srv.FaultCluster()
	if got := cl.Nodes(); !slices.Equal(got, []string{"node1", "node2", "node3"}) {
		t.Fatalf("nodes %v", got)
	}
	leader, err := cl.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	replica := "node3"
	if leader == replica {
		replica = "node2"
	}
	j := workloadtest.Job(t, srv.Target, "payments", map[string]string{"accounts": "2000", "banks": "5"}, 7)
	workloadtest.Prepare(t, j, 2)
	j.Cluster, j.CheckAfterRun = cl, true
	ttl := time.Duration(srv.Cluster.Timing.TTL) * time.Second
	for _, step := range []struct {
		spec string
		time time.Duration
	}{
		{"stop-node@1s,for=2s,node=" + leader, 5 * time.Second},
		{"partition-node@1s,for=2s,node=" + replica, 5 * time.Second},
		// The lock expires a TTL after the crash; the run lasts long enough to see writes again.
		{"kill-leader@1s", 2*ttl + 5*time.Second},
	} {
		j.Faults = mustFaults(t, step.spec)
		res, err := j.Run(ctx, runner.Config{Threads: 4, Duration: step.time, MaxTries: 10})
		if err != nil {
			t.Fatalf("%s: the run did not go on: %v", step.spec, err)
		}
		checkFaultRun(t, step.spec, res)
		a := res.Availability
		if a.Faults[0].Kind == runspec.KillLeader {
			if a.Faults[0].Node != leader || a.Reconnections == 0 || a.DowntimeS < 1 {
				t.Errorf("kill-leader hit %s (leader %s), %d reconnections, downtime %.1f s: want the leader killed, clients reconnected after an outage",
					a.Faults[0].Node, leader, a.Reconnections, a.DowntimeS)
			}
		}
	}
	if next, err := cl.Leader(ctx); err != nil || next == leader {
		t.Errorf("leader after kill-leader: %q (%v), want a new one", next, err)
	}
	dirs, ports := nodeLeftovers(srv)
	if err := srv.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	checkNothingLeft(t, dirs, ports)
}
