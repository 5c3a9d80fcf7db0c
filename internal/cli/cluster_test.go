package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/engine/cluster"
	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/engine/profile"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/testserver"
	"github.com/fairbench/fairbench/internal/throwaway"
)

// run --target with a galera cluster's host list measures every node, as compare does: each
// node's own figures from its cgroup (the nodes are throwaway servers of this process), their sum,
// and the replication sampled every interval.
func TestRunByHostListMeasuresNodes(t *testing.T) {
	inst := testserver.Installation(t, discovery.Galera)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv, err := throwaway.Start(ctx, inst, profile.Profile{BufferPoolBytes: 64 << 20, MaxConnections: 50, RedoBytes: 64 << 20}, "")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dsn := srv.Cluster.DSN
	opts := []string{"--target", dsn, "--workload", "oltp_read_write", "--tables", "1", "--table-size", "50"}
	if code, _, stderr := run(append([]string{"prepare"}, opts...)...); code != 0 {
		t.Fatalf("prepare: %s", stderr)
	}
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := run(append([]string{"run", "--threads", "3", "--time", "3s", "--report-interval", "1s", "--out", out}, opts...)...)
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	r := readResult(t, out)
	s := r.Server
	if s == nil || len(s.Nodes) != cluster.GaleraNodes || s.Replication == nil || s.Replication.Method != result.ReplicationGalera || s.Replication.CertFailures == nil {
		t.Fatalf("server %+v: want 3 nodes and galera's replication", s)
	}
	for _, n := range s.Nodes {
		if n.Error != "" || !strings.HasPrefix(n.CPUSource, "cgroup v") || n.Counters["wal_bytes"] <= 0 {
			t.Errorf("%s: error %q, CPU from %q, redo %d: want its own cgroup and counters", n.Name, n.Error, n.CPUSource, n.Counters["wal_bytes"])
		}
	}
	sampled := 0 // a sample over 2 s on a starved machine reads as down; most must not
	for _, iv := range r.Intervals {
		if len(iv.Nodes) == cluster.GaleraNodes && iv.Nodes[0].ClusterSize != nil {
			sampled++
		}
	}
	if sampled == 0 || sampled*2 < len(r.Intervals) {
		t.Errorf("%d of %d intervals have the nodes' samples: %+v", sampled, len(r.Intervals), r.Intervals)
	}
	if !strings.Contains(stdout, "node3 127.0.0.1:") || !strings.Contains(stdout, `"method":"galera"`) {
		t.Errorf("run's summary does not list the nodes and replication:\n%s", stdout)
	}
}
