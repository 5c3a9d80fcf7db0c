package sqldb

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
)

// Conn is one client connection, owned by one goroutine at a time.
//
// The hot path (Stmt.Query/Exec) talks to each driver's lowest public layer (pgconn, and
// go-sql-driver/mysql's driver.Conn without database/sql) so fairbench spends no more client CPU
// per query than sysbench's C drivers: the client shares the machine with the server, and every
// microsecond it burns is taken from the engine under test.
type Conn interface {
	Kind() Kind
	// Prepare makes a server-side prepared statement. The SQL uses ? placeholders for every engine.
	Prepare(ctx context.Context, sql string) (Stmt, error)
	// Exec runs one statement without parameters through the simple/text protocol (DDL, BEGIN, COMMIT).
	Exec(ctx context.Context, sql string) error
	// Query runs a statement and returns all rows as text (NULL as ""). For setup, checks and
	// metrics; not for the measured path.
	Query(ctx context.Context, sql string, args ...any) ([][]string, error)
	Close() error
}

// Stmt is a prepared statement. Arguments may be int, int64, string or []byte; a []byte is not
// retained after the call returns, so callers can reuse their buffers.
type Stmt interface {
	// Query executes and reads every row, returning how many there were.
	Query(ctx context.Context, args ...any) (int64, error)
	// Exec executes a statement that returns no rows and reports rows affected.
	Exec(ctx context.Context, args ...any) (int64, error)
}

// Open connects once to the target.
func Open(ctx context.Context, t Target) (Conn, error) {
	var c Conn
	var err error
	switch t.Kind {
	case Postgres:
		c, err = openPostgres(ctx, t)
	case MySQL, MariaDB:
		c, err = openMySQL(ctx, t)
	default:
		return nil, fmt.Errorf("unknown engine kind %q", t.Kind)
	}
	if err != nil {
		return nil, describeConnectError(t, err)
	}
	return c, nil
}

// describeConnectError turns a driver's connection failure into one line that says what to fix.
func describeConnectError(t Target, err error) error {
	var ne net.Error
	var oe *net.OpError
	msg := err.Error()
	switch {
	case errors.As(err, &oe) || errors.As(err, &ne) || strings.Contains(msg, "connection refused") || strings.Contains(msg, "dial"):
		if strings.Contains(msg, "refused") {
			return fmt.Errorf("cannot reach %s: connection refused; is the server running and listening on %s:%d?", t.Redacted(), t.Host, t.Port)
		}
		return fmt.Errorf("cannot reach %s: %s; check the host and port", t.Redacted(), lastLine(msg))
	case strings.Contains(msg, "password authentication failed") || strings.Contains(msg, "Access denied") || strings.Contains(msg, "28P01") || strings.Contains(msg, "1045"):
		return fmt.Errorf("the server at %s refused user %q: wrong user or password; fix the user:password in --target", t.Redacted(), t.User)
	case strings.Contains(msg, "does not exist") || strings.Contains(msg, "Unknown database") || strings.Contains(msg, "1049") || strings.Contains(msg, "3D000"):
		return fmt.Errorf("database %q does not exist on %s: create it first (CREATE DATABASE %s)", t.Database, t.Redacted(), t.Database)
	}
	return fmt.Errorf("cannot connect to %s: %s", t.Redacted(), lastLine(msg))
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, "\n"); i >= 0 {
		return s[i+1:]
	}
	return s
}

// Dialect differences that workloads need to know about.

// QuoteIdent quotes a table or column name for the engine.
func QuoteIdent(k Kind, name string) string {
	if k.MySQLFamily() {
		return "`" + strings.ReplaceAll(name, "`", "``") + "`"
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// ServerVersion asks the server itself, so a result names the real product even when a
// wire-compatible server sits behind a mysql:// or postgres:// URL.
func ServerVersion(ctx context.Context, c Conn) (string, error) {
	rows, err := c.Query(ctx, "SELECT version()")
	if err != nil {
		return "", err
	}
	if len(rows) == 0 || len(rows[0]) == 0 {
		return "", fmt.Errorf("SELECT version() returned nothing")
	}
	return rows[0][0], nil
}

// TableExists reports whether a table is in the connection's current database/schema.
func TableExists(ctx context.Context, c Conn, name string) (bool, error) {
	var q string
	if c.Kind().MySQLFamily() {
		q = "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?"
	} else {
		q = "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ?"
	}
	rows, err := c.Query(ctx, q, name)
	if err != nil {
		return false, err
	}
	return len(rows) == 1 && rows[0][0] != "0", nil
}
