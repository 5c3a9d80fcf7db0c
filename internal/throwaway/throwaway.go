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
	"github.com/fairbench/fairbench/internal/servermetrics"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// Server is a running throwaway server. Close always stops it and removes its data directory.
type Server struct {
	*engine.Server
	Target sqldb.Target
	// Conn is an admin connection for the server's settings, counters and fingerprints; it is
	// not a client of the workload.
	Conn sqldb.Conn
	// Settings is the server's own view of the settings that matter (pg_settings, SHOW VARIABLES).
	Settings map[string]string
}

// Start starts inst with prof, its data directory under workDir, and connects to it. On any
// error nothing is left running.
func Start(ctx context.Context, inst engine.Installation, prof engine.Profile, workDir string) (_ *Server, err error) {
	srv, err := engine.Start(ctx, inst, prof, workDir)
	if err != nil {
		return nil, err
	}
	s := &Server{Server: srv}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.Close())
		}
	}()
	if s.Target, err = sqldb.ParseTarget(srv.DSN); err != nil {
		return nil, err
	}
	if s.Conn, err = sqldb.Open(ctx, s.Target); err != nil {
		return nil, err
	}
	if s.Settings, err = servermetrics.Settings(ctx, s.Conn); err != nil {
		return nil, fmt.Errorf("reading %s settings: %w", inst.Name(), err)
	}
	return s, nil
}

// Monitor is a fresh server monitor on the admin connection: the engine's counters, and the
// kernel's accounting of the server's cgroup (or its processes) and data directory.
func (s *Server) Monitor() *servermetrics.Monitor {
	g, _ := s.Cgroup()
	return servermetrics.NewMonitor(s.Conn, s.PIDs).WithCgroup(g, s.DataDisk()).WithDataDir(s.DataDir)
}

// Close closes the admin connection and stops the server, removing its data directory.
func (s *Server) Close() error {
	var errs []error
	if s.Conn != nil {
		errs = append(errs, s.Conn.Close())
	}
	return errors.Join(append(errs, s.Stop())...)
}
