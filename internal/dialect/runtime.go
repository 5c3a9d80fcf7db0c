package dialect

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/fairbench/fairbench/internal/sqldb"
)

// RunTimeSettings change a running server's server-wide settings, for a comparison that applies
// the fairness profile to a server it did not start (compare --apply-profile), and put them back.
type RunTimeSettings interface {
	// ApplySetting sets one server-wide setting on the running server and returns what puts it
	// back exactly as it was. A setting the server takes only at start (or at initdb) is a
	// *NotAtRunTime error, and nothing is changed.
	ApplySetting(ctx context.Context, c sqldb.Conn, name, value string) (restore func(context.Context) error, err error)
}

// NotAtRunTime is a setting a running server cannot take: it changes only at a restart, or when
// the data directory is created.
type NotAtRunTime struct{ Setting, When string }

func (e *NotAtRunTime) Error() string { return e.Setting + " changes only " + e.When }

// ApplySetting: ALTER SYSTEM and a reload, for the settings whose context allows it; put back by
// restoring postgresql.auto.conf's own line for it (or its absence), so that a value the owner
// set there survives and none is added.
func (d postgres) ApplySetting(ctx context.Context, c sqldb.Conn, name, value string) (func(context.Context) error, error) {
	rows, err := c.Query(ctx, "SELECT context, source FROM pg_settings WHERE name = $1", name)
	if err != nil {
		return nil, fmt.Errorf("reading %s's context: %w", name, err)
	}
	if len(rows) == 0 {
		return nil, &NotAtRunTime{Setting: name, When: "at a start (this server has no such setting)"}
	}
	switch rows[0][0] {
	case "postmaster":
		return nil, &NotAtRunTime{Setting: name, When: "at a restart"}
	case "internal":
		return nil, &NotAtRunTime{Setting: name, When: "when the data directory is created (initdb)"}
	}
	if rows[0][1] == "command line" {
		// A -c on the server's command line outranks every configuration file.
		return nil, &NotAtRunTime{Setting: name, When: "at a restart (the server's command line sets it, which ALTER SYSTEM does not override)"}
	}
	auto, err := c.Query(ctx, "SELECT setting FROM pg_file_settings WHERE name = $1 AND sourcefile LIKE '%postgresql.auto.conf' ORDER BY seqno DESC LIMIT 1", name)
	if err != nil {
		return nil, fmt.Errorf("reading postgresql.auto.conf's %s (pg_file_settings needs a superuser): %w", name, err)
	}
	if err := d.alterSystem(ctx, c, name, &value); err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		if len(auto) > 0 {
			return d.alterSystem(ctx, c, name, &auto[0][0])
		}
		return d.alterSystem(ctx, c, name, nil)
	}, nil
}

// alterSystem sets (value nil: resets) name in postgresql.auto.conf and reloads, waiting until
// this session sees the change: the next step's sessions then start under it.
func (postgres) alterSystem(ctx context.Context, c sqldb.Conn, name string, value *string) error {
	stmt := "ALTER SYSTEM RESET " + name
	if value != nil {
		stmt = "ALTER SYSTEM SET " + name + " = " + literal(*value)
	}
	before, _ := c.Query(ctx, "SELECT current_setting($1)", name)
	if err := c.Exec(ctx, stmt); err != nil {
		return fmt.Errorf("%s: %w", stmt, err)
	}
	if _, err := c.Query(ctx, "SELECT pg_reload_conf()"); err != nil {
		return fmt.Errorf("reloading the configuration: %w", err)
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		now, err := c.Query(ctx, "SELECT current_setting($1)", name)
		if err != nil || len(before) == 0 || now[0][0] != before[0][0] || (value != nil && strings.EqualFold(now[0][0], *value)) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil // the value may equal the old one in the server's own units: nothing to wait for
}

var plainNumber = regexp.MustCompile(`^[0-9]+$`)

// ApplySetting: SET GLOBAL, never SET PERSIST, so nothing outlives the server's next restart,
// and the global value as it was set back after.
func (d innodb) ApplySetting(ctx context.Context, c sqldb.Conn, name, value string) (func(context.Context) error, error) {
	if !settingName.MatchString(name) {
		return nil, fmt.Errorf("%q is not a setting name", name)
	}
	rows, err := c.Query(ctx, "SELECT @@GLOBAL."+name)
	if err != nil && (strings.Contains(err.Error(), "Unknown system variable") || strings.Contains(err.Error(), "1193")) {
		// A start option that is no variable (performance_schema_consumer_*).
		return nil, &NotAtRunTime{Setting: name, When: "at a start (a start option, not a variable)"}
	}
	if err != nil || len(rows) == 0 {
		return nil, fmt.Errorf("reading %s: %v", name, err)
	}
	old := rows[0][0]
	if err := c.Exec(ctx, "SET GLOBAL "+name+" = "+d.settingValue(value)); err != nil {
		if strings.Contains(err.Error(), "read only variable") || strings.Contains(err.Error(), "1238") {
			return nil, &NotAtRunTime{Setting: name, When: "at a restart (a read-only variable)"}
		}
		return nil, fmt.Errorf("SET GLOBAL %s: %w", name, err)
	}
	return func(ctx context.Context) error {
		return c.Exec(ctx, "SET GLOBAL "+name+" = "+d.settingValue(old))
	}, nil
}

var settingName = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// settingValue quotes a value unless it is a number: a numeric variable refuses a string.
func (d innodb) settingValue(v string) string {
	if plainNumber.MatchString(v) {
		return v
	}
	return d.Literal(v)
}

// IsNotAtRunTime says whether err is a setting the running server cannot take.
func IsNotAtRunTime(err error) bool {
	var n *NotAtRunTime
	return errors.As(err, &n)
}
