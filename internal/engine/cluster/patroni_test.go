package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/engine"
	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/engine/profile"
)

// testTiming is Patroni's timing in these tests: the leader lock expires 8 s after a crash
// (Patroni's minimum-sensible on a loaded 2-core machine; its own default is 30 s).
var testTiming = engine.PatroniTiming{TTL: 8, LoopWait: 1, RetryTimeout: 3}

// hostPostgresHA is the host's PostgreSQL, which postgres-ha runs on; the test skips without it,
// patroni or etcd unless CI requires postgres-ha.
func hostPostgresHA(t *testing.T) discovery.Installation {
	t.Helper()
	for _, in := range discovery.DiscoverWithClusters("") {
		if in.Kind == discovery.PostgresHA {
			return in
		}
	}
	skipUnlessRequired(t, discovery.PostgresHA, "the host's PostgreSQL, patroni or etcd-server")
	return discovery.Installation{}
}

// TestPostgresHACluster starts a real cluster (etcd, three Patroni nodes), checks it has one
// leader and two streaming replicas that see the leader's writes, kills the leader as a crashed
// host would, and checks that a replica takes over within Patroni's TTL, that a client through
// the host list reaches it, and that Stop leaves no process, directory, record or port behind.
func TestPostgresHACluster(t *testing.T) {
	integration(t)
	inst := hostPostgresHA(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir := workDir(t)
	t0 := time.Now()
	c, err := StartPostgresHA(ctx, inst, profile.Profile{BufferPoolBytes: 64 * mib, MaxConnections: 50, RedoBytes: 64 * mib}, dir, HAOptions{Timing: testTiming})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop() })
	// The DSN carries the throwaway cluster's password: name the nodes' ports instead.
	var nodePorts []int
	for _, n := range c.Nodes {
		nodePorts = append(nodePorts, n.Port)
	}
	t.Logf("postgres-ha %s: %d nodes streaming in %s, ports %v", c.Version, len(c.Nodes), time.Since(t0).Round(time.Millisecond), nodePorts)

	leader, err := c.LeaderNode(ctx)
	if err != nil {
		t.Fatal(err)
	}
	roles := map[string]int{}
	for _, in := range c.NodeInfos(ctx) {
		roles[in.Role]++
	}
	if roles["leader"] != 1 || roles["sync_standby"] != 1 || roles["replica"] != 1 {
		t.Errorf("roles %v: want one leader, one sync_standby, one replica", roles)
	}
	exec := func(s *engine.Server, q string) {
		t.Helper()
		conn, err := s.PgConnect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %s: %v", nameOf(s), q, err)
		}
	}
	count := func(s *engine.Server) (n int) {
		t.Helper()
		conn, err := s.PgConnect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil {
			t.Fatalf("%s: %v", nameOf(s), err)
		}
		return n
	}
	exec(leader, "CREATE TABLE t (id int PRIMARY KEY)")
	exec(leader, "INSERT INTO t VALUES (1), (2)")
	for _, s := range c.Nodes {
		// The synchronous standby has the rows when the commit returns; the other may lag a little.
		deadline := time.Now().Add(10 * time.Second)
		for count(s) != 2 && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		if n := count(s); n != 2 {
			t.Errorf("%s sees %d rows, want 2", nameOf(s), n)
		}
	}

	// A crash of the leader's host: a replica takes the lock once it expires.
	killedAt := time.Now()
	if err := leader.Fault(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var next *engine.Server
	for next == nil || next == leader {
		if time.Since(killedAt) > time.Duration(3*testTiming.TTL)*time.Second {
			t.Fatalf("no new leader %s after killing %s", time.Since(killedAt), nameOf(leader))
		}
		next, _ = c.LeaderNode(ctx)
		time.Sleep(200 * time.Millisecond)
	}
	took := time.Since(killedAt)
	t.Logf("%s killed, %s leads after %s (TTL %d s)", nameOf(leader), nameOf(next), took.Round(time.Millisecond), testTiming.TTL)
	if took > time.Duration(testTiming.TTL+2*testTiming.LoopWait+testTiming.RetryTimeout)*time.Second {
		t.Errorf("failover took %s: want within TTL %d s plus a loop", took, testTiming.TTL)
	}
	exec(next, "INSERT INTO t VALUES (3)")
	if n := count(next); n != 3 {
		t.Errorf("new leader %s sees %d rows, want 3 (the two acknowledged before the crash and one after)", nameOf(next), n)
	}

	var pids []int
	for _, s := range c.Nodes {
		pids = append(pids, s.PIDs()...)
	}
	pids = append(pids, c.etcd.cmd.Process.Pid)
	ports := []int{c.etcd.client, c.etcd.peer}
	for _, s := range c.Nodes {
		ports = append(ports, s.OwnPorts()...)
	}
	if err := c.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	assertNothingLeft(t, pids, ports)
}

// assertNothingLeft checks that no process, record or listening port of a cluster survived Stop
// (workDir's cleanup checks its directories).
func assertNothingLeft(t *testing.T, pids, ports []int) {
	t.Helper()
	for _, p := range pids {
		if alive(p) {
			t.Errorf("process %d still alive after Stop", p)
		}
	}
	for _, p := range ports {
		if l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p)); err != nil {
			t.Errorf("port %d still taken after Stop: %v", p, err)
		} else {
			l.Close()
		}
	}
	recs, _ := os.ReadDir(engine.RecordDir)
	for _, r := range recs {
		if strings.HasPrefix(r.Name(), strconv.Itoa(os.Getpid())+"-") {
			t.Errorf("record %s left after Stop", r.Name())
		}
	}
	if len(engine.Running()) != 0 {
		t.Errorf("servers still registered after Stop: %v", engine.Running())
	}
}

// reapChildCluster is the cluster reaping test's child: it starts a postgres-ha cluster, prints
// its processes (etcd's, each node's: Patroni and the postgres it detached) and the directories
// and records they left on disk, on one line, and waits to be killed.
func reapChildCluster() {
	var inst discovery.Installation
	for _, in := range discovery.DiscoverWithClusters("") {
		if in.Kind == discovery.PostgresHA {
			inst = in
		}
	}
	c, err := StartPostgresHA(context.Background(), inst, profile.Profile{BufferPoolBytes: 64 * mib, MaxConnections: 50, RedoBytes: 64 * mib},
		os.Getenv("FAIRBENCH_REAP_DIR"), HAOptions{Timing: testTiming})
	if err != nil {
		os.Stderr.WriteString(err.Error())
		os.Exit(4)
	}
	left := reapChildLine{PIDs: []int{c.etcd.cmd.Process.Pid}, Paths: []string{c.etcd.runDir, c.etcd.record}}
	for _, s := range c.Nodes {
		left.PIDs = append(left.PIDs, s.PIDs()...)
		left.Paths = append(left.Paths, filepath.Dir(s.DataDir))
	}
	b, _ := json.Marshal(left)
	os.Stdout.Write(append(b, '\n'))
	time.Sleep(time.Hour)
}

// reapChildLine is what the child leaves behind when it is killed.
type reapChildLine struct {
	PIDs  []int
	Paths []string
}

// TestReapKilledCluster kills a fairbench (a child test process) that runs a postgres-ha cluster,
// as kill -9 or the OOM killer would, and checks that engine.ReapStale then ends every etcd,
// Patroni and postgres process of it (postgres runs detached from Patroni) and removes its
// directories and records.
func TestReapKilledCluster(t *testing.T) {
	integration(t)
	hostPostgresHA(t)
	cmd, line := startReapChild(t, workDir(t))
	var left reapChildLine
	if err := json.Unmarshal([]byte(line), &left); err != nil {
		t.Fatalf("child's line %q: %v", line, err)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	var running []int
	for _, p := range left.PIDs {
		if alive(p) {
			running = append(running, p)
		}
	}
	// etcd, three Patroni and three postmasters, each with children.
	if len(running) < 7 {
		t.Fatalf("the killed child left %d processes: want etcd, Patroni and postgres running to reap", len(running))
	}
	if _, err := engine.ReapStale(); err != nil {
		t.Errorf("ReapStale: %v", err)
	}
	for _, p := range running {
		if alive(p) {
			t.Errorf("pid %d still runs after reaping", p)
		}
	}
	for _, p := range left.Paths {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still there after reaping", p)
		}
	}
}

// TestPostgresHAInterrupted covers the two other ways a cluster ends: a start that fails midway
// (here its context ends before the cluster is whole), which must stop what it
// started, and StopAll, which a Ctrl-C runs, stopping a whole cluster (etcd last). Neither may
// leave a process, port, record or directory behind.
func TestPostgresHAInterrupted(t *testing.T) {
	integration(t)
	inst := hostPostgresHA(t)
	prof := profile.Profile{BufferPoolBytes: 64 * mib, MaxConnections: 50, RedoBytes: 64 * mib}
	dir := workDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Second)
	_, err := StartPostgresHA(ctx, inst, prof, dir, HAOptions{Timing: testTiming})
	cancel()
	if err == nil {
		t.Fatal("a cluster started within 6 s: the test needs a start that is cut short")
	}
	t.Logf("cut short: %v", err)
	assertNothingLeft(t, nil, nil)
	auxiliaries.Lock()
	n := len(auxiliaries.procs)
	auxiliaries.Unlock()
	if n != 0 {
		t.Errorf("%d etcd still registered after a failed start", n)
	}

	ctx, cancel = context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := StartPostgresHA(ctx, inst, prof, dir, HAOptions{Timing: testTiming})
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	ports := []int{c.etcd.client, c.etcd.peer}
	for _, s := range c.Nodes {
		pids = append(pids, s.PIDs()...)
		ports = append(ports, s.OwnPorts()...)
	}
	pids = append(pids, c.etcd.cmd.Process.Pid)
	if err := engine.StopAll(); err != nil {
		t.Errorf("StopAll: %v", err)
	}
	assertNothingLeft(t, pids, ports)
}
