package compare

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/fairbench/fairbench/internal/attach"
	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/engine/profile"
	"github.com/fairbench/fairbench/internal/fault"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/servermetrics"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/throwaway"
)

// AsConfigured is the profile a target's results record: the server ran as its owner configured
// it, with no fairness profile applied.
const AsConfigured = "as configured"

// AsConfiguredWithProfile is the profile of a target given the fairness profile's run-time
// settings (--apply-profile): the rest stays as its owner configured it.
const AsConfiguredWithProfile = "as configured, with the fair profile's run-time settings"

// roundServer is the server one round of an engine measures: a throwaway server fairbench
// started for the round, or a server the user runs, attached for the round and left running.
type roundServer struct {
	kind, version string
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

// name is the engine's name in results and the report, as result.Engine.Name gives it: the
// alias of a target or a build, else the kind and release.
func (s *roundServer) name() string {
	return result.Engine{Kind: s.kind, Version: s.version, Alias: s.alias}.Name()
}

// throwawayServer is a round's server that fairbench started from inst; a build is named after
// its directory, and its results say where it came from.
func throwawayServer(srv *throwaway.Server, inst Contender) *roundServer {
	rs := &roundServer{
		kind: srv.Kind, version: srv.Version,
		target: srv.Target, conn: srv.Conn, settings: srv.Settings,
		applied: srv.Applied, translations: srv.Translations(), pids: srv.PIDs, fault: srv.FaultCluster(),
		watch: func(context.Context) (servermetrics.Watcher, func(), error) { return srv.Monitor(), func() {}, nil },
	}
	if inst.Build != "" {
		rs.alias, rs.build = inst.Name(), inst.Build
	}
	return rs
}

// attachServer connects to a target for one round, as it is configured: its settings read as it
// runs, its host figures from its cgroup or process tree on this machine, or its node_exporter.
// close drops nothing (suiteOn drops the round's tables) and closes the admin connection.
func (c *comparison) attachServer(ctx context.Context, inst Contender, _ profile.Profile) (*roundServer, func() error, error) {
	t := inst.Target
	c.logf("== %s %s (%s): your server, as it is configured (ETA %s)", t.Name, inst.Version, inst.Origin, c.eta())
	dsn := t.DSN
	conn, err := sqldb.Open(ctx, dsn)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", t.Name, err)
	}
	// The round's first reads and settings, bounded: a server that froze since the last round
	// must end the round, not hold it.
	actx, cancel := context.WithTimeout(ctx, cleanupGrace)
	defer cancel()
	applied, restore, err := c.applyProfile(actx, inst, conn)
	if err != nil {
		return nil, nil, errors.Join(err, restore(), conn.Close())
	}
	settings, err := servermetrics.Settings(actx, conn)
	if err != nil {
		// A product of the same protocol may lack the views the settings come from: the parity
		// audit then shows them as not reported, and the run goes on.
		c.logf("   %s: its settings could not be read (%v): the parity audit shows them as not reported", t.Name, firstLine(err))
		settings = nil
	}
	host, err := attach.FindHost(ctx, dsn, t.NodeExporter)
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("%s: %w", t.Name, err), restore(), conn.Close())
	}
	if host.Local == nil && host.Node == nil {
		c.logf("   %s: no host figures (not on this machine, and no --node-exporter %s=URL): CPU, memory and disk are absent", t.Name, t.Name)
	}
	connect := func(ctx context.Context) (sqldb.Conn, error) { return sqldb.Open(ctx, dsn) }
	rs := &roundServer{
		kind: string(dsn.Kind), version: inst.Version, alias: t.Name, attached: true,
		target: dsn, conn: conn, settings: settings, applied: applied, pids: host.Processes(),
		watch: func(ctx context.Context) (servermetrics.Watcher, func(), error) {
			return attach.Watch(ctx, dsn, connect, host)
		},
	}
	return rs, func() error {
		err := errors.Join(restore(), conn.Close())
		c.logf("== %s: fairbench's tables dropped; the server left running as it was", t.Name)
		return err
	}, nil
}

// cleanupGrace bounds dropping a target's tables after Ctrl-C: the user's server must be left as
// it was found, and a server that does not answer must not hold fairbench forever.
const cleanupGrace = 30 * time.Second

// dropData drops the tables a round loaded on a target (fairbench's own only: DropOwned refuses
// any other), within cleanupGrace, whether or not the round's context is cancelled.
func (c *comparison) dropData(ctx context.Context, srv *roundServer, data *loadedData) error {
	if data.job == nil {
		return nil
	}
	// Also after Ctrl-C, and never for ever on a server that froze.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupGrace)
	defer cancel()
	if err := data.job.Cleanup(ctx, data.job.Env(1, false, nil, c.opts.Log)); err != nil {
		return fmt.Errorf("dropping fairbench's tables on %s: %w", srv.name(), err)
	}
	return nil
}

// connectionSettings are the profile's settings about where a server listens and how it names
// its clients: a throwaway server's own business, never changed on a server the user runs.
var connectionSettings = map[string]bool{"listen_addresses": true, "bind_address": true, "port": true, "skip_name_resolve": true}

// applyProfile sets, where --apply-profile asks, the fairness profile's settings that a running
// target takes (dialect.ApplySetting), and returns them and what restores them, which runs
// however the round ends (its context may be cancelled by then). A setting that needs a restart
// is left as configured and named in the log and the report's notes; any other failure undoes
// what was set and ends the round.
func (c *comparison) applyProfile(ctx context.Context, inst Contender, conn sqldb.Conn) (map[string]string, func() error, error) {
	var restores []func(context.Context) error
	restore := func() error {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupGrace)
		defer cancel()
		var errs []error
		for i := len(restores) - 1; i >= 0; i-- {
			errs = append(errs, restores[i](rctx))
		}
		restores = nil
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("restoring %s's settings: %w", inst.Name(), err)
		}
		return nil
	}
	if !c.opts.ApplyProfile {
		return nil, restore, nil
	}
	want := c.opts.Profile.ForServer(inst.Kind, inst.Version)
	applied := map[string]string{}
	var left []string
	d := dialect.Of(conn)
	for _, name := range slices.Sorted(maps.Keys(want)) {
		if connectionSettings[name] {
			continue
		}
		undo, err := d.ApplySetting(ctx, conn, name, want[name])
		switch {
		case dialect.IsNotAtRunTime(err):
			left = append(left, name+"="+want[name])
		case err != nil:
			return nil, restore, fmt.Errorf("--apply-profile on %s: %w", inst.Name(), err)
		default:
			restores = append(restores, undo)
			applied[name] = want[name]
		}
	}
	c.logf("   %s: --apply-profile set %d of the profile's settings for the round (restored after)", inst.Name(), len(applied))
	if len(left) > 0 {
		c.note(fmt.Sprintf("%s: --apply-profile could not set %s on the running server (each changes only at a restart or initdb): left as its owner configured them, which the parity audit shows.", inst.Name(), strings.Join(left, ", ")))
	}
	return applied, restore, nil
}
