package cluster

import (
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/engine/discovery"
)

// A partition's nft script drops, in the output hook every loopback packet passes once, the
// node's own ports both ways, each connection it opened (both directions of the port pair) and
// every socket of its cgroup.
func TestPartitionRules(t *testing.T) {
	p := &partition{table: "fairbench_part_42_node2"}
	for _, tc := range []struct {
		name  string
		ports []int
		conns [][2]int
		want  []string
		not   []string
	}{
		{"ports alone", []int{5432, 8008}, nil,
			[]string{"table inet fairbench_part_42_node2 {", "type filter hook output priority 0; policy accept;",
				"tcp sport { 5432, 8008 } drop", "tcp dport { 5432, 8008 } drop", `socket cgroupv2 level 1 "x" drop`},
			[]string{"tcp sport . tcp dport"}},
		{"with its connections", []int{3306}, [][2]int{{41000, 4567}},
			[]string{"tcp sport . tcp dport { 41000 . 4567, 4567 . 41000 } drop"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := p.rules(tc.ports, tc.conns, `socket cgroupv2 level 1 "x"`)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("script lacks %q:\n%s", w, got)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(got, n) {
					t.Errorf("script has %q:\n%s", n, got)
				}
			}
		})
	}
}

// /proc/net/tcp writes addresses as hex "IP:PORT".
func TestHexPort(t *testing.T) {
	for in, want := range map[string]int{"0100007F:1F90": 8080, "00000000:0CEA": 3306, "0100007F:": 0} {
		if got := hexPort(in); got != want {
			t.Errorf("hexPort(%q) = %d, want %d", in, got, want)
		}
	}
}

// What --fault may name is known before a cluster starts where the names are fixed (galera's),
// and a kill-leader is refused where every node writes.
func TestKinds(t *testing.T) {
	for _, tc := range []struct {
		kind             string
		cluster, leaders bool
		nodes            string
	}{
		{discovery.Galera, true, false, "node1 node2 node3"},
		{discovery.PostgresHA, true, true, ""},
		{discovery.Postgres, false, true, ""},
	} {
		if IsCluster(tc.kind) != tc.cluster || EveryNodeWrites(tc.kind) == tc.leaders || strings.Join(NodeNames(tc.kind), " ") != tc.nodes {
			t.Errorf("%s: cluster %v, every node writes %v, nodes %v", tc.kind, IsCluster(tc.kind), EveryNodeWrites(tc.kind), NodeNames(tc.kind))
		}
	}
}

// An asynchronous cluster names the setting that lets it lose an acknowledged commit; a
// synchronous one names none.
func TestLossSetting(t *testing.T) {
	if s := (&Cluster{Synchronous: true}).LossSetting(); s != "" {
		t.Errorf("synchronous: %q", s)
	}
	if s := (&Cluster{maxLag: 1 << 20}).LossSetting(); !strings.Contains(s, "synchronous_mode=off") || !strings.Contains(s, "1048576 bytes") {
		t.Errorf("asynchronous: %q", s)
	}
}
