package compare

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fairbench/fairbench/internal/attach"
	"github.com/fairbench/fairbench/internal/engine"
	"github.com/fairbench/fairbench/internal/fault"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/servermetrics"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/throwaway"
)

// AsConfigured is the profile a target's results record: the server ran as its owner configured
// it, with no fairness profile applied.
const AsConfigured = "as configured"

// roundServer is the server one round of an engine measures: a throwaway server fairbench
// started for the round, or a server the user runs, attached for the round and left running.
type roundServer struct {
	name, kind, version string
	// alias and build are what the results name a target or a build by (result.Engine).
	alias, build string
	// attached is a server fairbench did not start: no profile applied, its tables dropped after.
	attached bool
	target   sqldb.Target
	// conn is an admin connection for fingerprints and answers, not a client of the workload.
	conn sqldb.Conn
	// settings are the server's own view of the settings that matter, read as the round began.
	settings map[string]string
	// applied is the fairness profile as the server was given it, and translations how it
	// reached the server's version; nil for a server fairbench did not start.
	applied      map[string]string
	translations []result.Translation
	pids         func() []int
	fault        fault.Cluster
	// watch is a fresh monitor of the server for one step, and what closes it.
	watch func(context.Context) (servermetrics.Watcher, func(), error)
}

func throwawayServer(srv *throwaway.Server) *roundServer {
	return &roundServer{
		name: result.EngineName(srv.Kind, srv.Version), kind: srv.Kind, version: srv.Version,
		target: srv.Target, conn: srv.Conn, settings: srv.Settings,
		applied: srv.Applied, translations: srv.Translations(), pids: srv.PIDs, fault: srv.FaultCluster(),
		watch: func(context.Context) (servermetrics.Watcher, func(), error) { return srv.Monitor(), func() {}, nil },
	}
}

// attachServer connects to a target for one round, as it is configured: its settings read as it
// runs, its host figures from its cgroup or process tree on this machine, or its node_exporter.
// close drops nothing (suiteOn drops the round's tables) and closes the admin connection.
func (c *comparison) attachServer(ctx context.Context, inst Contender, _ engine.Profile) (*roundServer, func() error, error) {
	t := inst.Target
	c.logf("== %s %s (%s): your server, as it is configured (ETA %s)", t.Name, inst.Version, inst.Origin, c.eta())
	dsn := t.DSN
	conn, err := sqldb.Open(ctx, dsn)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", t.Name, err)
	}
	settings, err := servermetrics.Settings(ctx, conn)
	if err != nil {
		// A product of the same protocol may lack the views the settings come from: the parity
		// audit then shows them as not reported, and the run goes on.
		c.logf("   %s: its settings could not be read (%v): the parity audit shows them as not reported", t.Name, firstLine(err))
		settings = nil
	}
	host, err := attach.FindHost(ctx, dsn, t.NodeExporter)
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("%s: %w", t.Name, err), conn.Close())
	}
	if host.Local == nil && host.Node == nil {
		c.logf("   %s: no host figures (not on this machine, and no --node-exporter %s=URL): CPU, memory and disk are absent", t.Name, t.Name)
	}
	connect := func(ctx context.Context) (sqldb.Conn, error) { return sqldb.Open(ctx, dsn) }
	rs := &roundServer{
		name: t.Name, kind: string(dsn.Kind), version: inst.Version, alias: t.Name, attached: true,
		target: dsn, conn: conn, settings: settings, pids: host.Processes(),
		watch: func(ctx context.Context) (servermetrics.Watcher, func(), error) {
			return attach.Watch(ctx, dsn, connect, host)
		},
	}
	return rs, func() error {
		err := conn.Close()
		c.logf("== %s: fairbench's tables dropped; the server left running as it was", t.Name)
		return err
	}, nil
}

// cleanupGrace bounds dropping a target's tables after Ctrl-C: the user's server must be left as
// it was found, and a server that does not answer must not hold fairbench forever.
const cleanupGrace = 30 * time.Second

// dropData drops the tables a round loaded on a target (fairbench's own only: DropOwned refuses
// any other), on a connection of its own when the round's context is already cancelled.
func (c *comparison) dropData(ctx context.Context, srv *roundServer, data *loadedData) error {
	if data.job == nil {
		return nil
	}
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), cleanupGrace)
		defer cancel()
	}
	if err := data.job.Cleanup(ctx, data.job.Env(1, false, nil, c.opts.Log)); err != nil {
		return fmt.Errorf("dropping fairbench's tables on %s: %w", srv.name, err)
	}
	return nil
}
