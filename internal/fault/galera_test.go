package fault_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/engine"
	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/engine/profile"
	"github.com/fairbench/fairbench/internal/fault"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/runner"
	"github.com/fairbench/fairbench/internal/runspec"
	"github.com/fairbench/fairbench/internal/testserver"
	"github.com/fairbench/fairbench/internal/throwaway"
	"github.com/fairbench/fairbench/internal/workload/workloadtest"

	_ "github.com/fairbench/fairbench/internal/workload/payments"
)

func TestMain(m *testing.M) { testserver.Main(m) }

// galera starts a real three-node cluster, or skips where galera is not installed (and fails
// where FAIRBENCH_REQUIRE_ENGINES asks for it).
func galera(t *testing.T, ctx context.Context) *throwaway.Server {
	t.Helper()
	inst := testserver.Installation(t, discovery.Galera)
	srv, err := throwaway.Start(ctx, inst, profile.Profile{BufferPoolBytes: 128 << 20, MaxConnections: 50, RedoBytes: 64 << 20}, "")
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// TestPaymentsThroughGaleraFaults runs payments on a real galera cluster three times, each with
// a fault in its measured window: node2 frozen for 2 s (SIGSTOP), node2 cut off for 2 s
// (nftables), then node3 killed. Each run goes on to the end, its clients reconnect where their
// node went away, the downtime is measured, every transfer a client saw committed is found on
// the surviving nodes, and money is conserved. Afterwards nothing of the cluster is left.
func TestPaymentsThroughGaleraFaults(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv := galera(t, ctx)
	defer srv.Close()
	cl := srv.FaultCluster()
	if got := cl.Nodes(); !slices.Equal(got, []string{"node1", "node2", "node3"}) {
		t.Fatalf("nodes %v", got)
	}
	if err := fault.Check(cl, mustFaults(t, "kill-leader@1s")); err == nil {
		t.Fatal("kill-leader accepted on galera, where every node writes")
	}
	j := workloadtest.Job(t, srv.Target, "payments", map[string]string{"accounts": "2000", "banks": "5"}, 7)
	workloadtest.Prepare(t, j, 2)
	j.Cluster, j.CheckAfterRun = cl, true

	// A killed node stalls the survivors' commits until galera declares it dead (its suspect
	// timeout, 5 s), so that run is long enough to see the cluster write again.
	for _, step := range []struct {
		spec string
		time time.Duration
	}{{"stop-node@1s,for=2s,node=node2", 4 * time.Second}, {"partition-node@1s,for=2s,node=node2", 4 * time.Second}, {"kill-node@1s", 10 * time.Second}} {
		spec := step.spec
		j.Faults = mustFaults(t, spec)
		res, err := j.Run(ctx, runner.Config{Threads: 6, Duration: step.time, MaxTries: 10})
		if err != nil {
			t.Fatalf("%s: the run did not go on: %v", spec, err)
		}
		checkFaultRun(t, spec, res)
	}
	if n := len(engine.Running()); n == 0 {
		t.Fatal("no server running before Close")
	}
	dirs, ports := nodeLeftovers(srv)
	if err := srv.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	checkNothingLeft(t, dirs, ports)
}

// checkFaultRun: complete, the fault fired and ended, clients reconnected where the fault cut
// their connections, no acknowledged transfer lost, money conserved (the data check passed).
func checkFaultRun(t *testing.T, spec string, res *result.Result) {
	t.Helper()
	a := res.Availability
	if !res.Complete || a == nil || len(a.Faults) != 1 || a.Faults[0].Error != "" || a.Acks == nil {
		t.Fatalf("%s: complete %v, availability %+v", spec, res.Complete, a)
	}
	t.Logf("%s: %d transactions, %d errors, %d retries, %d reconnections, %d in doubt; downtime %.2f s (longest %.2f s); acknowledged %d, lost %d; fault %+v",
		spec, res.Transactions, res.Errors, res.Retries, a.Reconnections, a.InDoubt, a.DowntimeS, a.LongestOutageS,
		a.Acks.Acknowledged, a.Acks.Lost, a.Faults[0])
	if f := a.Faults[0]; f.AtS < 0.99 || (f.Kind != runspec.KillNode && f.Kind != runspec.KillLeader && f.EndS-f.AtS < 1.9) {
		t.Errorf("%s: fault fired at %.2f s and ended at %.2f s", spec, f.AtS, f.EndS)
	}
	if a.Acks.Lost != 0 || a.Acks.Acknowledged == 0 || a.Acks.NotChecked != "" {
		t.Errorf("%s: acks %+v: want every acknowledged transfer found", spec, a.Acks)
	}
	if dc := res.DataCheck; dc == nil || !dc.Passed {
		t.Errorf("%s: data check %+v: want money conserved", spec, dc)
	}
	if spec == "kill-node@1s" && a.Reconnections == 0 {
		t.Errorf("%s: no reconnection, though the clients on node3 lost their connections", spec)
	}
	if a.LongestOutageS > 0 && len(a.Outages) == 0 {
		t.Errorf("%s: longest outage %.2f s but none listed", spec, a.LongestOutageS)
	}
}

// nodeLeftovers lists each node's data directory and ports, to check after Close.
func nodeLeftovers(srv *throwaway.Server) (dirs []string, ports []int) {
	for _, n := range srv.Cluster.Nodes {
		dirs = append(dirs, n.DataDir)
		ports = append(ports, n.Port)
	}
	return dirs, ports
}

func checkNothingLeft(t *testing.T, dirs []string, ports []int) {
	t.Helper()
	if n := len(engine.Running()); n != 0 {
		t.Errorf("%d servers still running after Close", n)
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("data directory %s left behind (%v)", d, err)
		}
	}
	for _, p := range ports {
		if c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(p), time.Second); err == nil {
			c.Close()
			t.Errorf("port %d still answers after Close", p)
		}
	}
	if out, err := exec.Command("nft", "list", "tables").Output(); err == nil && strings.Contains(string(out), "fairbench_part_"+strconv.Itoa(os.Getpid())) {
		t.Errorf("partition tables left: %s", out)
	}
}
