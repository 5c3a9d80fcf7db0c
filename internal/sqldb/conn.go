package sqldb

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
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
	// FirstRow executes a query and returns its column names, its first row as text (nil for
	// NULL) and how many rows there were: a script's \gset, which keeps a row's values.
	FirstRow(ctx context.Context, args ...any) (names []string, row []*string, n int64, err error)
}

// Open connects once to the target. Connecting and the handshake together take at most
// t.ConnectTimeout (DefaultConnectTimeout unless the DSN says otherwise); every error is a
// *ConnectError whose message is one line naming the problem and the fix.
//
// For a host list (a cluster's nodes) successive calls start at successive hosts, so one
// connection per client thread spreads the threads evenly; a host that refuses is skipped for
// the next one, as an application with a node list fails over.
//
// target_session_attrs=prefer-standby (compare --read-replicas) first looks for a standby from
// that host on, and takes the primary only when no standby answers: pgconn, given one host at a
// time, would take the primary whenever a connection's turn started there.
func Open(ctx context.Context, t Target) (Conn, error) {
	if len(t.Addrs) < 2 {
		return openOne(ctx, t)
	}
	if t.Params.Get("target_session_attrs") == "prefer-standby" {
		if c, err := openList(ctx, t.WithSessionAttrs("standby"), true); err == nil {
			return c, nil
		}
	}
	return openList(ctx, t, false)
}

// openList opens the first host of t's list that answers, starting at the next position. With
// moveOn, a host skipped (the primary, for standby) moves the next start past the one taken, so
// that the connections spread evenly over the hosts that take them, not twice on the one after
// the primary.
func openList(ctx context.Context, t Target, moveOn bool) (Conn, error) {
	start := nextHost.Add(1) - 1
	first := int(start % uint64(len(t.Addrs)))
	var last error
	for i := range t.Addrs {
		one := t
		host, port, _ := net.SplitHostPort(t.Addrs[(first+i)%len(t.Addrs)])
		one.Host, one.Addrs = host, nil
		one.Port, _ = strconv.Atoi(port)
		c, err := openOne(ctx, one)
		if err == nil {
			if moveOn && i > 0 {
				nextHost.CompareAndSwap(start+1, start+1+uint64(i))
			}
			return c, nil
		}
		last = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("no host of %d answered; the last: %w", len(t.Addrs), last)
}

// nextHost is the host list position the next Open starts at.
var nextHost atomic.Uint64

func openOne(ctx context.Context, t Target) (Conn, error) {
	timeout := t.ConnectTimeout
	if timeout <= 0 {
		timeout = DefaultConnectTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var c Conn
	var err error
	switch t.Kind {
	case Postgres:
		c, err = openPostgres(cctx, t)
	case MySQL, MariaDB:
		c, err = openMySQL(cctx, t)
	default:
		return nil, fmt.Errorf("unknown engine kind %q", t.Kind)
	}
	if err != nil {
		return nil, describeConnectError(ctx, t, timeout, err)
	}
	return c, nil
}

// Close may be called from another goroutine while a statement is in flight (to end a run
// whose server stopped answering): neither driver may be used from two goroutines, so then only
// the socket is shut down; the statement fails at once and its driver closes itself.
func closeConn(sock *blockingConn, closeDriver func() error) error {
	if sock != nil && sock.busy() {
		return sock.Close()
	}
	return closeDriver()
}

// closeTimeout bounds the goodbye message a driver sends on Close: a stopped server's full
// receive buffer must not hold Close forever.
const closeTimeout = 2 * time.Second

// Counters are a connection's statements and round trips on the wire since it was opened. A
// statement is one Exec or Query (preparing one is a round trip, not a statement), counted by its
// Class: the runner's reads, writes and other per transaction are these, so every workload's
// figures are counted one way. The parity audit compares them per transaction between engines.
// A round trip is one request answered by the server, connection set-up included.
type Counters struct {
	Statements int64
	// Reads and Writes are the statements of those classes; the rest are Other.
	Reads, Writes int64
	RoundTrips    int64
}

// Other is the statements that are neither reads nor writes.
func (c Counters) Other() int64 { return c.Statements - c.Reads - c.Writes }

// Sub is c minus an earlier reading.
func (c Counters) Sub(before Counters) Counters {
	return Counters{
		Statements: c.Statements - before.Statements,
		Reads:      c.Reads - before.Reads,
		Writes:     c.Writes - before.Writes,
		RoundTrips: c.RoundTrips - before.RoundTrips,
	}
}

// Counting is a connection that keeps Counters: sqldb's connections, and the shared fake
// (sqldb/fakeconn) that unit tests use.
type Counting interface{ Counters() Counters }

// CountersOf reads c's counters; any goroutine may, also while c is in use (a reading taken
// then may miss the statement in flight). ok is false for a Conn that keeps none.
func CountersOf(c Conn) (Counters, bool) {
	if cc, ok := c.(Counting); ok {
		return cc.Counters(), true
	}
	return Counters{}, false
}

// StatementCounts are a connection's statements by class, kept by sqldb's connections and the
// shared fake (sqldb/fakeconn) alike. Only the owning goroutine adds; they are atomic so that a
// run can read them while its threads go on.
type StatementCounts struct{ all, reads, writes atomic.Int64 }

// Add counts one statement of class c.
func (s *StatementCounts) Add(c Class) {
	s.all.Add(1)
	switch c {
	case Read:
		s.reads.Add(1)
	case Write:
		s.writes.Add(1)
	}
}

// Load reads the counts (no round trips: those are the socket's).
func (s *StatementCounts) Load() Counters {
	return Counters{Statements: s.all.Load(), Reads: s.reads.Load(), Writes: s.writes.Load()}
}

// CountAs makes a prepared statement count as class: a CALL of a routine that writes is a write,
// which the workload knows and the statement's words do not say. A statement that keeps no
// counts is returned as it is.
func CountAs(s Stmt, class Class) Stmt {
	if c, ok := s.(interface{ CountAs(Class) }); ok {
		c.CountAs(class)
	}
	return s
}

// QueryAs is c.Query counted as class: a statement sent as text whose class the caller knows
// already (classified once, not on every call) or knows better (a routine that writes).
func QueryAs(ctx context.Context, c Conn, class Class, sql string, args ...any) ([][]string, error) {
	if q, ok := c.(interface {
		QueryAs(context.Context, Class, string, ...any) ([][]string, error)
	}); ok {
		return q.QueryAs(ctx, class, sql, args...)
	}
	return c.Query(ctx, sql, args...)
}

// Uncounted is c for statements that observe the server rather than do the workload's work (a
// plan taken, the server's statistics flushed between a query and the reading of its figures):
// they go to the same session but are not counted in c's Counters, so they stay out of the
// run's reads and writes. Closing it does nothing; close c. A Conn that is not sqldb's is
// returned as it is.
func Uncounted(c Conn) Conn {
	switch cc := c.(type) {
	case *pgConn:
		return &pgConn{conn: cc.conn, sock: cc.sock, counts: new(StatementCounts), view: true}
	case *myConn:
		return &myConn{kind: cc.kind, conn: cc.conn, sock: cc.sock, counts: new(StatementCounts), view: true}
	}
	return c
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
