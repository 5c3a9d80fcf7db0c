package throwaway

import (
	"context"
	"time"

	"github.com/fairbench/fairbench/internal/engine"
	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// Node is one node of a cluster as its monitors need it: a name, a role, the server (process,
// cgroup, data directory) and a target that reaches it alone. A clustered engine only has to say
// these for its per-node and replication figures to be measured.
type Node struct {
	Name, Role string
	Server     *engine.Server
	Target     sqldb.Target
}

// rolesTimeout bounds asking Patroni who leads, which a node being failed over may not answer.
const rolesTimeout = 3 * time.Second

// Nodes lists a cluster's nodes in order, each with its role now; nil for a single server.
func (s *Server) Nodes() []Node {
	if s.Cluster == nil {
		return nil
	}
	roles := s.nodeRoles()
	var out []Node
	for i, srv := range s.Cluster.Nodes {
		t, err := sqldb.ParseTarget(srv.DSN)
		if err != nil {
			continue // the engine made this DSN: it parses
		}
		out = append(out, Node{Name: s.Cluster.NodeName(i), Role: roles[s.Cluster.NodeName(i)], Server: srv, Target: t})
	}
	return out
}

// nodeRoles is each node's role by name: every galera node takes writes; a postgres-ha node is
// the leader or a replica as Patroni sees it now ("" where its Patroni does not answer).
func (s *Server) nodeRoles() map[string]string {
	roles := map[string]string{}
	if s.Kind == discovery.Galera {
		for i := range s.Cluster.Nodes {
			roles[s.Cluster.NodeName(i)] = result.RolePrimary
		}
		return roles
	}
	ctx, cancel := context.WithTimeout(context.Background(), rolesTimeout)
	defer cancel()
	for _, in := range s.Cluster.NodeInfos(ctx) {
		switch in.Role {
		case "leader":
			roles[in.Name] = result.RoleLeader
		case "":
		default: // replica, sync_standby, standby_leader
			roles[in.Name] = result.RoleReplica
		}
	}
	return roles
}

// replication is how the cluster's nodes replicate: what its monitor samples every interval.
func (s *Server) replication() string {
	if s.Kind == discovery.Galera {
		return result.ReplicationGalera
	}
	return result.ReplicationStreaming
}
