package compare

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/fairbench/fairbench/internal/attach"
	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

// Contender is one engine a comparison measures in every round: an installation, of which
// fairbench starts a throwaway server with the fairness profile each round, or a server the user
// runs (Target), which fairbench attaches to as it is configured and never stops.
type Contender struct {
	discovery.Installation
	Target *Target
}

// Name is the engine's name in the results and the report: the user's for a target.
func (c Contender) Name() string {
	if c.Target != nil {
		return c.Target.Name
	}
	return c.Installation.Name()
}

// Target is a server the user runs, given as NAME=DSN (compare --targets).
type Target struct {
	Name string
	DSN  sqldb.Target
	// NodeExporter is the URL of a node_exporter on the server's host, for a remote server's host
	// figures ("" for a server on this machine, watched from its cgroup or process tree).
	NodeExporter string
}

var (
	targetStart = regexp.MustCompile(`(?:^|,)\s*([A-Za-z][A-Za-z0-9_.-]*)=([A-Za-z]+://)`)
	targetName  = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]*$`)
)

// ParseTargets reads --targets values: NAME=DSN items, comma-separated (a DSN's own host list
// keeps its commas: an item begins only where NAME=SCHEME:// does). Names are the report's
// columns, so each is used once. No error repeats a DSN: it may hold a password.
func ParseTargets(values []string) ([]Target, error) {
	var out []Target
	for _, v := range values {
		v = strings.TrimSpace(v)
		starts := targetStart.FindAllStringSubmatchIndex(v, -1)
		if len(starts) == 0 || strings.TrimSpace(strings.TrimLeft(v[:starts[0][0]], ",")) != "" {
			return nil, fmt.Errorf("--targets: each item is NAME=DSN, e.g. --targets pg15=postgres://bench@127.0.0.1:5432/bench,maria=mariadb://bench@127.0.0.1:3306/bench")
		}
		for i, s := range starts {
			end := len(v)
			if i+1 < len(starts) {
				end = starts[i+1][0]
			}
			name := v[s[2]:s[3]]
			t, err := sqldb.ParseTarget(strings.TrimSpace(v[s[4]:end]))
			if err == nil {
				// password_file=, FAIRBENCH_PASSWORD, PGPASSWORD or MYSQL_PWD, as run's --target.
				err = t.ResolvePassword(os.Getenv)
			}
			if err != nil {
				return nil, fmt.Errorf("--targets %s: %w", name, err)
			}
			if slices.ContainsFunc(out, func(o Target) bool { return strings.EqualFold(o.Name, name) }) {
				return nil, fmt.Errorf("--targets: the name %s is used twice: give each server a name of its own", name)
			}
			out = append(out, Target{Name: name, DSN: t})
		}
	}
	return out, nil
}

// ParseNodeExporters reads --node-exporter NAME=URL,...: where each remote target's host figures
// come from. A name that is not a target's is refused.
func ParseNodeExporters(v string, targets []Target) error {
	for _, item := range strings.Split(v, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, url, ok := strings.Cut(item, "=")
		i := slices.IndexFunc(targets, func(t Target) bool { return t.Name == name })
		if !ok || !targetName.MatchString(name) || url == "" {
			return fmt.Errorf("--node-exporter: each item is TARGET=URL, e.g. pg15=http://db-host:9100/metrics")
		}
		if i < 0 {
			return fmt.Errorf("--node-exporter %s: no target is named %s: name one of --targets", name, name)
		}
		targets[i].NodeExporter = url
	}
	return nil
}

// probeTable is the table the check that a target's account may create tables creates and
// drops; fairbench's own, marked so, and never a name a user's table would have.
const probeTable = "fairbench_probe"

// attachContender checks, before any work, what can be known of a target: that it answers, what
// it is (MariaDB speaks MySQL's protocol, and says so in its version), that the account may create
// and drop a table, and that its node_exporter answers. It returns the target as a contender.
func attachContender(ctx context.Context, t Target) (Contender, error) {
	conn, err := sqldb.Open(ctx, t.DSN)
	if err != nil {
		return Contender{}, fmt.Errorf("--targets %s: %w", t.Name, err)
	}
	defer conn.Close()
	version, err := sqldb.ServerVersion(ctx, conn)
	if err != nil {
		return Contender{}, fmt.Errorf("--targets %s: reading its version: %w", t.Name, err)
	}
	t.DSN.Kind = productKind(t.DSN.Kind, version)
	if err := canCreateTables(ctx, t.DSN); err != nil {
		return Contender{}, fmt.Errorf("--targets %s (%s as user %s): %w", t.Name, t.DSN.Redacted(), t.DSN.User, err)
	}
	if t.NodeExporter != "" {
		if _, err := attach.FindHost(ctx, t.DSN, t.NodeExporter); err != nil {
			return Contender{}, fmt.Errorf("--targets %s: %w", t.Name, err)
		}
	}
	inst := discovery.Installation{Kind: string(t.DSN.Kind), Version: result.VersionNumber(version), Origin: "your server at " + t.DSN.Host + fmt.Sprintf(":%d", t.DSN.Port)}
	return Contender{Installation: inst, Target: &t}, nil
}

// productKind is the engine a MySQL-protocol server is: MariaDB names itself in its version.
func productKind(given sqldb.Kind, version string) sqldb.Kind {
	if !given.MySQLFamily() {
		return given
	}
	if strings.Contains(strings.ToLower(version), "mariadb") {
		return sqldb.MariaDB
	}
	return sqldb.MySQL
}

// canCreateTables creates and drops fairbench's probe table, on a connection that speaks the
// target's dialect: a server whose account may not create tables is refused before any work.
func canCreateTables(ctx context.Context, t sqldb.Target) error {
	conn, err := sqldb.Open(ctx, t)
	if err != nil {
		return err
	}
	defer conn.Close()
	st, err := workload.StateOf(ctx, conn, probeTable)
	if err != nil {
		return err
	}
	if st == workload.Foreign {
		return fmt.Errorf("a table %s exists that fairbench did not create: fairbench will not touch it; use another database", probeTable)
	}
	if st == workload.Absent {
		ddl := "CREATE TABLE " + probeTable + " (id INTEGER PRIMARY KEY)"
		if err := workload.CreateOwned(ctx, conn, probeTable, ddl); err != nil {
			return fmt.Errorf("the account may not create tables in database %s (%v): grant it CREATE there, or give a database it owns", t.Database, firstLine(err))
		}
	}
	if err := workload.DropOwned(ctx, conn, []string{probeTable}); err != nil {
		return fmt.Errorf("the account may not drop the tables it creates in database %s (%v): grant it DROP there", t.Database, firstLine(err))
	}
	return nil
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// checkTargetOptions refuses, before any work, what a comparison cannot do on a server it did
// not start: flip a knob (a restart), confine it to CPUs, move its data to a device, kill its
// nodes, or run clients in other network namespaces.
func checkTargetOptions(o *Options) error {
	if len(o.Targets) == 0 {
		if o.ApplyProfile {
			return fmt.Errorf("--apply-profile sets the profile on servers you run: give them with --targets")
		}
		return nil
	}
	for _, c := range []struct {
		on   bool
		flag string
	}{{len(o.Explain) > 0, "--explain"}, {len(o.ServerCPUs) > 0, "--server-cpus"}, {o.DeviceBytes > 0, "--device"},
		{len(o.Faults) > 0, "--fault"}, {o.Clients > 0 || o.Network != nil, "--clients and --network"}} {
		if c.on {
			return fmt.Errorf("%s needs servers fairbench starts, and --targets names servers you run: leave out %s, or compare with --engines", c.flag, c.flag)
		}
	}
	return nil
}

// planTargets attaches to each target, and refuses a name an engine of --engines has too.
func planTargets(ctx context.Context, o *Options, insts []Contender) ([]Contender, error) {
	if err := checkTargetOptions(o); err != nil {
		return nil, err
	}
	var errs []string
	for _, t := range o.Targets {
		if slices.ContainsFunc(insts, func(c Contender) bool { return c.Name() == t.Name }) {
			return nil, fmt.Errorf("--targets %s: %s is also an engine of --engines: give the target another name", t.Name, t.Name)
		}
		c, err := attachContender(ctx, t)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		insts = append(insts, c)
	}
	if len(errs) > 0 {
		// Every target that cannot be used, in one line: the user fixes them all at once.
		return nil, errors.New(strings.Join(errs, "; "))
	}
	return insts, nil
}

// localTargetPorts are the ports of the targets on this machine: another fairbench's server there
// (a serve) is what is measured, not a neighbour that shares the machine.
func localTargetPorts(ts []Target) []int {
	var out []int
	for _, t := range ts {
		if t.DSN.OnLoopback() {
			out = append(out, t.DSN.Port)
		}
	}
	return out
}
