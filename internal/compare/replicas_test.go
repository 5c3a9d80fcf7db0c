package compare

import (
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/suite"
)

// route sends only read-only workloads on postgres-ha to the replicas, and only when asked; the
// result says where each postgres-ha step ran, and nothing for other engines.
func TestRoute(t *testing.T) {
	ha, err := sqldb.ParseTarget("postgres://u@127.0.0.1:5001,127.0.0.1:5002,127.0.0.1:5003/fairbench?target_session_attrs=read-write")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		kind, workload string
		readReplicas   bool
		want, attrs    string
	}{
		{discovery.PostgresHA, "oltp_point_select", true, "replicas", "prefer-standby"},
		{discovery.PostgresHA, "oltp_read_only", true, "replicas", "prefer-standby"},
		{discovery.PostgresHA, "select_random_points", true, "replicas", "prefer-standby"},
		{discovery.PostgresHA, "oltp_point_select", false, "leader", ""},
		{discovery.PostgresHA, "oltp_read_write", true, "leader", ""},
		{discovery.PostgresHA, "payments", true, "leader", ""},
		{discovery.PostgresHA, "tpch", true, "leader", ""}, // Q15 creates a view: not for a replica
		{discovery.Galera, "oltp_point_select", true, "", ""},
		{discovery.Postgres, "oltp_point_select", true, "", ""},
	} {
		j, err := newJob(ha, suite.Resolved{Workload: tc.workload}, randgen.DefaultConfig("uniform"), 1, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		c := &comparison{opts: &Options{ReadReplicas: tc.readReplicas}}
		got := c.route(j, &roundServer{kind: tc.kind, target: ha})
		attrs := ""
		if j.ReadTarget != nil {
			attrs = j.ReadTarget.Params.Get("target_session_attrs")
		}
		if got != tc.want || attrs != tc.attrs || ha.Params.Get("target_session_attrs") != "read-write" {
			t.Errorf("%s %s read-replicas=%v: routing %q, client attrs %q; want %q, %q (leader target untouched)", tc.kind, tc.workload, tc.readReplicas, got, attrs, tc.want, tc.attrs)
		}
	}
}

// --read-replicas with client hosts is refused in one line: their clients connect to the leader.
func TestReadReplicasWithClientHosts(t *testing.T) {
	err := checkClientHosts(&Options{ReadReplicas: true, Clients: 2}, []suite.Resolved{{Workload: "oltp_point_select"}})
	if err == nil || !strings.Contains(err.Error(), "--read-replicas") || strings.Contains(err.Error(), "\n") {
		t.Errorf("got %v: want one line naming --read-replicas", err)
	}
}
