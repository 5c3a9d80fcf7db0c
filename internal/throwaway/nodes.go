package throwaway

import (
	"fmt"

	"github.com/fairbench/fairbench/internal/engine"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// Node is one node of a cluster as its monitors need it: a name, a role at the start, the server
// (process, cgroup, data directory) and a target that reaches it alone. A clustered engine only
// has to say these for its per-node and replication figures to be measured.
type Node struct {
	Name, Role string
	Server     *engine.Server
	Target     sqldb.Target
}

// Nodes lists a cluster's nodes in order; nil for a single server.
func (s *Server) Nodes() []Node {
	if s.Cluster == nil {
		return nil
	}
	var out []Node
	for i, srv := range s.Cluster.Nodes {
		t, err := sqldb.ParseTarget(srv.DSN)
		if err != nil {
			continue // the engine made this DSN: it parses
		}
		out = append(out, Node{Name: fmt.Sprintf("node%d", i+1), Role: s.nodeRole(i), Server: srv, Target: t})
	}
	return out
}

// nodeRole is node i's role when the cluster started: every galera node takes writes.
func (s *Server) nodeRole(int) string {
	return result.RolePrimary
}

// replication is how the cluster's nodes replicate: what its monitor samples every interval.
func (s *Server) replication() string {
	if s.Kind == engine.Galera {
		return result.ReplicationGalera
	}
	return result.ReplicationStreaming
}
