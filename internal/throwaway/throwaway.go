// Package throwaway is a server fairbench starts for one comparison or study and removes after:
// the engine's process, a target and a connection to it, the server's own view of the fairness
// settings, and monitors wired to its cgroup and data directory. Compare and the studies start
// their servers through it, so both measure a server the same way.
package throwaway

import (
	"context"
	"errors"
	"fmt"

	"github.com/fairbench/fairbench/internal/engine"
	"github.com/fairbench/fairbench/internal/engine/cluster"
	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/engine/profile"
	"github.com/fairbench/fairbench/internal/servermetrics"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// Server is a running throwaway server. Close always stops it and removes its data directory.
type Server struct {
	// Server is the server, or a cluster's first node: its processes, cgroup and data directory
	// are what Monitor samples (the other nodes' are not sampled yet).
	*engine.Server
	// Kind and Version name what was started: "galera" for a cluster, the server's kind otherwise.
	Kind, Version string
	// Cluster is the whole cluster when Kind is a cluster kind, nil for a single server.
	Cluster *cluster.Cluster
	Target  sqldb.Target
	// Conn is an admin connection for the server's settings, counters and fingerprints; it is
	// not a client of the workload.
	Conn sqldb.Conn
	// Settings is the server's own view of the settings that matter (pg_settings, SHOW VARIABLES).
	Settings map[string]string

	// nodeConns are admin connections to each node of a cluster alone, for its own counters.
	nodeConns []sqldb.Conn
}

// Start starts inst with prof, its data directory under workDir, and connects to it. On any
// error nothing is left running.
func Start(ctx context.Context, inst discovery.Installation, prof profile.Profile, workDir string) (_ *Server, err error) {
	s, err := startServerOrCluster(ctx, inst, prof, workDir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.Close())
		}
	}()
	dsn := s.DSN
	if s.Cluster != nil {
		dsn = s.Cluster.DSN
	}
	if s.Target, err = sqldb.ParseTarget(dsn); err != nil {
		return nil, err
	}
	if s.Conn, err = sqldb.Open(ctx, s.Target); err != nil {
		return nil, err
	}
	if s.Settings, err = servermetrics.Settings(ctx, s.Conn); err != nil {
		return nil, fmt.Errorf("reading %s settings: %w", inst.Name(), err)
	}
	for _, n := range s.Nodes() {
		c, err := sqldb.Open(ctx, n.Target)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n.Name, err)
		}
		s.nodeConns = append(s.nodeConns, c)
	}
	return s, nil
}

// startServerOrCluster starts a single server, or a cluster for a cluster kind (galera,
// postgres-ha; the latter in synchronous mode).
func startServerOrCluster(ctx context.Context, inst discovery.Installation, prof profile.Profile, workDir string) (*Server, error) {
	if inst.Kind == discovery.Galera || inst.Kind == discovery.PostgresHA {
		var c *cluster.Cluster
		var err error
		if inst.Kind == discovery.Galera {
			c, err = cluster.StartGalera(ctx, inst, prof, workDir)
		} else {
			c, err = cluster.StartPostgresHA(ctx, inst, prof, workDir, cluster.HAOptions{})
		}
		if err != nil {
			return nil, err
		}
		return &Server{Server: c.Nodes[0], Kind: c.Kind, Version: c.Version, Cluster: c}, nil
	}
	srv, err := engine.Start(ctx, inst, prof, workDir)
	if err != nil {
		return nil, err
	}
	return &Server{Server: srv, Kind: srv.Kind, Version: srv.Version}, nil
}

// Monitor is a fresh server monitor: the engine's counters, and the kernel's accounting of the
// server's cgroup (or its processes) and data directory; for a cluster, the same of every node
// over a connection to it alone, their sum, and their replication sampled every interval.
func (s *Server) Monitor() servermetrics.Watcher {
	if s.Cluster == nil {
		return nodeMonitor(s.Server, s.Conn)
	}
	nodes := s.Nodes()
	watched := make([]servermetrics.ClusterNode, len(nodes))
	for i, n := range nodes {
		watched[i] = servermetrics.ClusterNode{Name: n.Name, Role: n.Role, Target: n.Target, Monitor: nodeMonitor(n.Server, s.nodeConns[i])}
	}
	return servermetrics.NewClusterMonitor(s.replication(), watched)
}

func nodeMonitor(srv *engine.Server, conn sqldb.Conn) *servermetrics.Monitor {
	g, _ := srv.Cgroup()
	return servermetrics.NewMonitor(conn, srv.PIDs).WithCgroup(g, srv.DataDisk()).WithDataDir(srv.DataDir)
}

// Close closes the admin connection and stops the server, removing its data directory.
func (s *Server) Close() error {
	var errs []error
	if s.Conn != nil {
		errs = append(errs, s.Conn.Close())
	}
	for _, c := range s.nodeConns {
		errs = append(errs, c.Close())
	}
	if s.Cluster != nil {
		return errors.Join(append(errs, s.Cluster.Stop())...)
	}
	return errors.Join(append(errs, s.Stop())...)
}
